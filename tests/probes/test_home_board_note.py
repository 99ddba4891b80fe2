"""The pipeline board never shows more parents evaluated than released without saying where they came from
(issue 28 item 12), and its figures read in words ("1 parent", "2 probes")."""

from __future__ import annotations

import pytest

from evaluation.runs import eval_run_create, eval_run_dispatch
from home.selectors import pipeline_board
from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from tests.conftest import make_user
from tests.factories import scripted
from tests.probes.conftest import approve_as_planned, make_demo_parent


@pytest.fixture
def evaluated_beyond_release(release, django_user_model, eager):
    """One released parent, then a second one compiled and approved (current probes, in no release), and a
    completed run over every current probe."""
    make_demo_parent(django_user_model, problem_id="BOARD_2", sample="BOARD_2", stem_suffix=" BOARD_2")
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    approve_as_planned(Probe.objects.exclude(state=Probe.State.SUPERSEDED))
    scripted("m-board", [])
    run = eval_run_create(model_names=["m-board"], conditions=["raw"], start=False, options={"resamples": 10})
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    return run


def test_the_board_says_evaluated_parents_came_from_current_probes(evaluated_beyond_release):
    stages = {s.key: s for s in pipeline_board()}
    released, evaluated = stages["released"], stages["evaluated"]
    probes = evaluated_beyond_release.requests.count()
    assert (released.parents.value, released.parents.label) == (1, "parent")
    assert (evaluated.parents.value, evaluated.parents.label) == (2, "parents")
    assert (evaluated.probes.value, evaluated.probes.label) == (probes, "probes")
    assert (
        evaluated.note
        == f"2 parents evaluated ({probes} probes) — 1 from current probes not yet in a release."
    )
    assert released.note == ""


def test_no_note_when_every_evaluated_parent_is_released(release, eager):
    scripted("m-rel", [])
    run = eval_run_create(model_names=["m-rel"], conditions=["raw"], release=release, start=False)
    eval_run_dispatch(run_id=run.pk)
    stages = {s.key: s for s in pipeline_board()}
    assert stages["evaluated"].parents.value == stages["released"].parents.value == 1
    assert stages["evaluated"].note == ""
    assert stages["evaluated"].done == "1 completed evaluation run."


def test_the_admin_home_shows_the_note(client, evaluated_beyond_release, django_user_model):
    client.force_login(make_user(django_user_model, "boss", "admin"))
    html = client.get("/").content.decode()
    assert 'data-testid="stage-evaluated-note">2 parents evaluated (' in html
    assert "— 1 from current probes not yet in a release.</p>" in html
    assert '<span class="board__value">1</span> parent</a>' in html  # released: 1 parent, not "1 parents"
