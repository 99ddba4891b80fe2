"""People and problems of the assignment tests: three annotators, two source reviewers, one person holding both
roles, an admin; problems created out of problem-id order (so an order by primary key would show)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from annotation.models import ParentProblem
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, SourceFactory


@pytest.fixture
def people(db, django_user_model) -> SimpleNamespace:
    return SimpleNamespace(
        admin=make_user(django_user_model, "boss", "admin"),
        ann_a=make_user(django_user_model, "ann_a", "annotator"),
        ann_b=make_user(django_user_model, "ann_b", "annotator"),
        ann_c=make_user(django_user_model, "ann_c", "annotator"),
        rev=make_user(django_user_model, "rev", "source_reviewer"),
        rev2=make_user(django_user_model, "rev2", "source_reviewer"),
        both=make_user(django_user_model, "both", "annotator", "source_reviewer"),
    )


@pytest.fixture
def source(db):
    return SourceFactory(name="SeePhys")


@pytest.fixture
def seven(source) -> list:
    """Seven problems, created in the order 4, 1, 7, 2, 6, 3, 5; returned in problem-id order."""
    for n in (4, 1, 7, 2, 6, 3, 5):
        ParentProblemFactory(problem_id=f"as_{n:02d}", source=source)
    return list(ParentProblem.objects.filter(problem_id__startswith="as_").order_by("problem_id"))
