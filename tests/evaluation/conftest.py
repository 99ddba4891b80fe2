from __future__ import annotations

import pytest

from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from tests.probes.conftest import approve_as_planned, make_demo_parent


def compile_and_approve(django_user_model) -> list[Probe]:
    make_demo_parent(django_user_model)
    run = compile_run_create(actor=None, seed=2027, enqueue=False)
    compile_run_execute(run_id=run.pk)
    approve_as_planned(Probe.objects.exclude(state=Probe.State.SUPERSEDED))
    return list(Probe.objects.exclude(state=Probe.State.SUPERSEDED).order_by("logical_probe_id"))


@pytest.fixture
def approved_probes(db, django_user_model):
    return compile_and_approve(django_user_model)
