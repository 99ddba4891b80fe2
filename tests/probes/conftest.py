from __future__ import annotations

import pytest

from annotation.models import PassDocument
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

from . import kit_demo


def make_demo_parent(
    django_user_model,
    *,
    problem_id="SYNTHETIC_TEST_ONLY",
    sample="SYNTHETIC_TEST_ONLY",
    answer="SECRET-ANSWER-two-newtons",
    pass4=None,
):
    """The kit demo parent as database rows, with Passes 1–4 approved and hash-fresh."""
    reviewer, _ = django_user_model.objects.get_or_create(username="SYNTHETIC_TEST_NOT_HUMAN")
    parent = ParentProblemFactory(
        problem_id=problem_id,
        source=SourceFactory(name="SYNTHETIC_UNIT_TEST"),
        source_split="test_fixture",
        source_sample_id=sample,
        stem=kit_demo.STEM,
        query=kit_demo.QUERY,
        options=[],
        answer=answer,
        solution="SECRET-SOLUTION-text",
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=kit_demo.stand_in_image())
    documents = {
        1: {"problem_id": problem_id},
        2: {"problem_id": problem_id},
        3: {"problem_id": problem_id},
        4: pass4 or kit_demo.pass4(),
    }
    for number, document in documents.items():
        sha = digest(document)
        PassDocumentFactory(
            parent=parent,
            pass_no=number,
            document=document,
            document_sha256=sha,
            status=PassDocument.Status.APPROVED,
            approved_sha256=sha,
            approved_by=reviewer,
        )
    return parent


@pytest.fixture
def demo_parent(db, django_user_model):
    return make_demo_parent(django_user_model)


@pytest.fixture
def scorer(role_users):
    from django.contrib.auth.models import Permission

    user = role_users["admin"]
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return type(user).objects.get(pk=user.pk)
