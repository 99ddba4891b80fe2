from __future__ import annotations

import pytest

from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from tests.conftest import make_user
from tests.probes.conftest import make_demo_parent


def compile_all() -> None:
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)


@pytest.fixture
def demo_probes(db, django_user_model) -> list[Probe]:
    """The kit demo parent compiled: three probes (T02-single, T03-image, T03-text) in the development split."""
    make_demo_parent(django_user_model)
    compile_all()
    probes = list(Probe.objects.order_by("logical_probe_id"))
    assert len(probes) == 3 and {p.split for p in probes} == {Probe.Split.DEVELOPMENT}
    return probes


@pytest.fixture
def reviewers(db, django_user_model) -> dict[str, object]:
    return {
        "alice": make_user(django_user_model, "alice", "probe_reviewer"),
        "bob": make_user(django_user_model, "bob", "probe_reviewer"),
        "carol": make_user(django_user_model, "carol", "adjudicator"),
        "dave": make_user(django_user_model, "dave", "probe_reviewer", "adjudicator"),
        "admin": make_user(django_user_model, "boss", "admin"),
    }


DEV, A, B = "DEVPARENT", "CAND_A", "CAND_B"


def set_splits() -> None:
    Probe.objects.filter(parent__problem_id=DEV).update(split=Probe.Split.DEVELOPMENT)
    Probe.objects.filter(parent__problem_id__in=[A, B]).update(split=Probe.Split.UNASSIGNED)


@pytest.fixture
def batch(db, django_user_model, reviewers):
    for i, pid in enumerate((DEV, A, B)):
        # Distinct content: exact copies are dedup duplicates, which the Kit never releases.
        make_demo_parent(django_user_model, problem_id=pid, sample=f"S{i}", stem_suffix=f" Case {pid}.")
    compile_all()
    set_splits()
    assert Probe.objects.filter(split=Probe.Split.UNASSIGNED).count() == 6
    return reviewers
