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
    stem_suffix="",
):
    """The kit demo parent as database rows, with Passes 1–4 approved and hash-fresh. ``stem_suffix`` makes
    its statement distinct (exact copies are dedup duplicates) before the approvals are bound to it."""
    reviewer, _ = django_user_model.objects.get_or_create(username="SYNTHETIC_TEST_NOT_HUMAN")
    parent = ParentProblemFactory(
        problem_id=problem_id,
        source=SourceFactory(name="SYNTHETIC_UNIT_TEST"),
        source_split="test_fixture",
        source_sample_id=sample,
        stem=kit_demo.STEM + stem_suffix,
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


def reapprove(*parents) -> None:
    """A source reviewer approves the parents' approved passes again on their current content (an approval is
    bound to the statement, question, options and images it was made on: a change makes it stale)."""
    for parent in parents:
        parent.refresh_from_db()
        PassDocument.objects.filter(parent=parent, status=PassDocument.Status.APPROVED).update(
            approved_parent_sha256=parent.content_sha256
        )


@pytest.fixture
def demo_parent(db, django_user_model):
    return make_demo_parent(django_user_model)


def approve_as_planned(probes) -> None:
    """Approve each probe with its prospective packet, as a reviewer who agrees with the plan would."""
    from probes.services import probe_record_review

    for probe in probes:
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )


@pytest.fixture
def release(db, django_user_model, tmp_path):
    """The development release of one compiled and approved demo parent (a licensed source)."""
    from annotation.models import Source
    from probes.models import Probe
    from probes.releases import release_export
    from probes.services import compile_run_create, compile_run_execute

    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY")
    Source.objects.update(license="CC BY 4.0", url="https://example.org/source")
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    approve_as_planned(Probe.objects.all())
    return release_export(split="development", output=tmp_path / "release", actor=None)


@pytest.fixture
def scorer(role_users):
    from django.contrib.auth.models import Permission

    user = role_users["admin"]
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return type(user).objects.get(pk=user.pk)
