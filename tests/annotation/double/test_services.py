from __future__ import annotations

import pytest

from annotation.double.services import (
    double_sample_request,
    independent_save,
    independent_submit,
    sample_parents,
)
from annotation.models import IndependentPassDocument, SecondAnnotation
from audit.models import Event
from physalign_site.errors import ApplicationError, ConflictError
from tests.annotation.double.conftest import first_pass1
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, SourceFactory

pytestmark = pytest.mark.django_db


def test_sample_is_seeded_and_in_problem_id_order():
    ids = [f"p{n:02d}" for n in range(20)]
    first = sample_parents(ids, fraction=0.25, count=None, seed=11)
    assert first == sample_parents(list(reversed(ids)), fraction=0.25, count=None, seed=11)  # order-free
    assert len(first) == 5 and first == sorted(first)
    assert sample_parents(ids, fraction=None, count=3, seed=11) != sample_parents(
        ids, fraction=None, count=3, seed=12
    )
    assert sample_parents(ids, fraction=None, count=99, seed=1) == ids  # at most every candidate
    assert len(sample_parents(ids, fraction=0.01, count=None, seed=1)) == 1  # at least one


def test_second_annotators_spread_evenly_and_never_the_first(django_user_model):
    source = SourceFactory(name="spread")
    admin = make_user(django_user_model, "sp_admin", "admin")
    a = make_user(django_user_model, "sp_a", "annotator")
    b = make_user(django_user_model, "sp_b", "annotator")
    parents = [ParentProblemFactory(problem_id=f"sp_{n}", source=source) for n in range(6)]
    from annotation.services import pass_document_save

    # sp_a annotated sp_0: it must go to sp_b
    pass_document_save(
        parent=parents[0], pass_no=1, document=first_pass1("sp_0"), actor=a, expected_version=None
    )
    double_sample_request(source=source, annotator_ids=[a.pk, b.pk], actor=admin, count=6, seed=3)
    given = dict(SecondAnnotation.objects.values_list("parent__problem_id", "annotator__username"))
    assert given["sp_0"] == "sp_b"
    counts = {name: list(given.values()).count(name) for name in ("sp_a", "sp_b")}
    assert counts == {"sp_a": 3, "sp_b": 3}
    assert Event.objects.filter(verb="double_annotation.sample").count() == 1
    # nothing left to sample
    with pytest.raises(ApplicationError) as refused:
        double_sample_request(source=source, annotator_ids=[b.pk], actor=admin, count=1)
    assert refused.value.code == "sample_empty"


def test_admins_and_non_annotators_cannot_annotate_blind(django_user_model):
    source = SourceFactory(name="blind-roles")
    ParentProblemFactory(problem_id="br_0", source=source)
    admin = make_user(django_user_model, "br_admin", "admin", "annotator")
    reviewer = make_user(django_user_model, "br_rev", "source_reviewer")
    for user, code in ((admin, "second_annotator_admin"), (reviewer, "second_annotator_not_annotator")):
        with pytest.raises(ApplicationError) as refused:
            double_sample_request(source=source, annotator_ids=[user.pk], actor=admin, count=1)
        assert refused.value.code == code
    assert not SecondAnnotation.objects.exists()


def test_only_first_annotator_available_refuses_the_whole_sample(double, django_user_model):
    source = SourceFactory(name="only-first")
    parent = ParentProblemFactory(problem_id="of_0", source=source)
    from annotation.services import pass_document_save

    pass_document_save(
        parent=parent, pass_no=1, document=first_pass1("of_0"), actor=double["first"], expected_version=None
    )
    with pytest.raises(ApplicationError) as refused:
        double_sample_request(
            source=source, annotator_ids=[double["first"].pk], actor=double["admin"], count=1
        )
    assert refused.value.code == "no_independent_annotator"
    assert not SecondAnnotation.objects.filter(parent=parent).exists()


def test_independent_save_is_versioned_and_submit_validates(double):
    second_annotation = SecondAnnotation.objects.get(parent__problem_id="dbl_b")
    mine = first_pass1("dbl_b") | {"visual_nodes": []}
    doc = independent_save(
        second=second_annotation, pass_no=1, document=mine, actor=double["second"], expected_version=None
    )
    assert (doc.version, doc.status) == (1, "draft")
    with pytest.raises(ConflictError):
        independent_save(
            second=second_annotation,
            pass_no=1,
            document=first_pass1("dbl_b"),
            actor=double["second"],
            expected_version=7,
        )
    doc = independent_save(
        second=second_annotation,
        pass_no=1,
        document=first_pass1("dbl_b"),
        actor=double["second"],
        expected_version=1,
    )
    assert doc.version == 2
    with pytest.raises(ApplicationError) as other:
        independent_save(
            second=second_annotation, pass_no=1, document=mine, actor=double["other"], expected_version=2
        )
    assert other.value.code == "not_second_annotator"
    done = independent_submit(second=second_annotation, pass_no=1, actor=double["second"])
    assert done.status == IndependentPassDocument.Status.SUBMITTED
    # the first annotation is untouched by all of this
    assert double["parents"][1].passes.count() == 0
