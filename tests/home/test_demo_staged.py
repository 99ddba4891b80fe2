"""The staged demo (issue 28 item 11): after ``load_demo --stage`` (what ``make run`` loads) every role's home
shows its work, the demo evaluation's results page has values with intervals, the demo release exists and its
review proof and signoff verify, a debate run finished; staging twice changes nothing."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from annotation.models import ParentProblem
from evaluation.models import EvalRun
from home.demo_stage import DEBATE_RUN_NAME, EVAL_MODELS, EVAL_RUN_NAME, SIGNOFF_EVIDENCE
from models_registry.demo import DEMO_SOLVERS
from probes.models import Probe, Release
from probes.releases import release_validate
from review.models import BlindAnswer, ReviewSlot, Role, Signoff
from solving.models import SolveRun

pytestmark = pytest.mark.django_db

CI_CELL = r'\d\.\d{3}<span class="muted ci">\[\d\.\d{3}, \d\.\d{3}\]</span>'  # a value, then its 95% CI
COUNT = "12"  # generated problems: enough development parents for a release, a dispute and a claimed slot


@pytest.fixture
def staged(settings, tmp_path) -> str:
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("load_demo", "--count", COUNT, "--stage", stdout=out)
    return out.getvalue()


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _client(username: str) -> Client:
    user = get_user_model().objects.get(username=username)
    assert user.check_password(f"{username}-demo")  # the login make run prints
    client = Client()
    client.force_login(user)
    return client


def _home(username: str) -> str:
    response = _client(username).get("/")
    assert response.status_code == 200
    return _text(response.content.decode())


def _section(html: str, marker: str) -> str:
    start = html.index(marker)
    return html[start : html.index("</table>", start)]


def test_every_role_finds_its_work_on_its_first_login(staged):
    annotator = _home("annotator")
    # the 26 OpenStax diagrams are to start; the 20 text-only debate problems are no annotation work
    assert "26 To start" in annotator
    assert (
        "1 Rejected by the source reviewer" in annotator
        and "4 Submitted, awaiting source review" in annotator
    )
    assert "The query target names the wrong quantity" in annotator

    source = _home("source_reviewer")
    assert "7 passes waiting for review" in source  # Passes 3–4 of four problems, one Pass 3 rejected

    slots = {
        slot.reviewer.username: slot
        for slot in ReviewSlot.objects.filter(reviewer__isnull=False)
        .exclude(pk__in=BlindAnswer.objects.values("slot"))
        .select_related("reviewer", "parent")
    }
    assert sorted(slots) == ["adjudicator", "probe_reviewer", "probe_reviewer2"]
    assert (slots["probe_reviewer"].role, slots["probe_reviewer2"].role, slots["adjudicator"].role) == (
        Role.PRIMARY,
        Role.SECONDARY,
        Role.ADJUDICATOR,
    )
    for username, role in (
        ("probe_reviewer", "Primary"),
        ("probe_reviewer2", "Secondary"),
        ("adjudicator", "Adjudicator"),
    ):
        home = _home(username)
        assert "1 open slot of yours" in home, username
        assert f"{slots[username].parent.problem_id} · {role}" in home, username
    disputed = Probe.objects.get(parent=slots["adjudicator"].parent, state=Probe.State.PENDING_REVIEW)
    assert disputed.logical_probe_id == slots["adjudicator"].blind_first_probe_id

    admin = _home("admin")
    release = Release.objects.get()
    parents = len(set(release.items.values_list("problem_id", flat=True)))
    assert f"Released {parents} parents" in admin and f"Evaluated {parents} parents" in admin

    # the annotator's "to start" list holds problems with diagrams only, never the text-only debate problems
    listed = _client("annotator").get("/problems/?work=to_start").content.decode()
    ids = re.findall(r'<th scope="row"[^>]*>\s*<a href="/problems/([^/]+)/"', listed)
    assert ids and all(pid.startswith("ostx_") for pid in ids)
    assert not ParentProblem.objects.filter(problem_id__in=ids, images__isnull=True).exists()
    assert (
        ParentProblem.objects.filter(problem_id__startswith="debate_demo_", images__isnull=True).count() == 20
    )


def test_the_staged_runs_finish_the_release_verifies_and_staging_again_changes_nothing(staged):
    signoff = Signoff.objects.get(evidence_ref=SIGNOFF_EVIDENCE)
    release = Release.objects.get()
    assert signoff.release == release and signoff.reviewer.username == "admin"
    assert release.manifest["approval_mode"] == "individual"
    assert release_validate(Path(release.path)).errors == []  # the review proof and signoff verify
    assert sorted(set(release.items.values_list("problem_id", flat=True))) == signoff.problem_ids

    run = EvalRun.objects.get(name=EVAL_RUN_NAME)
    assert run.status == EvalRun.Status.COMPLETED and run.release == release
    assert run.done_infra_missing == 0 and run.total == run.requests.count() > 0
    client = _client("admin")
    page = client.get(f"/runs/{run.pk}/").content.decode()
    main = _section(page, 'id="table-main"')
    for model in EVAL_MODELS:
        row = main[main.index(f'<th scope="row" class="mono">{model}</th>') :]
        row = row[: row.index("</tr>")]
        cells = re.findall(r'<td class="num">(.*?)</td>', row)
        assert len(cells) == 6 and all(re.match(r"\d\.\d{3}", cell) for cell in cells), (model, cells)
        # GAcc, CAcc and JAcc carry their 95% interval (GAcc|C may withhold it on a pool this small)
        for cell in cells[:3]:
            assert re.fullmatch(CI_CELL, cell), cell
    assert "bounds" not in _text(_section(page, 'id="table-quadrants"'))

    debate = SolveRun.objects.get(name=DEBATE_RUN_NAME)
    assert debate.kind == SolveRun.Kind.DEBATE and debate.status == SolveRun.Status.COMPLETED
    assert debate.total == 20 and debate.debate.solver_names == list(DEMO_SOLVERS)
    assert client.get(f"/debate/runs/{debate.pk}/").status_code == 200

    # staging again: every step sees its result and is skipped
    before = _snapshot()
    probes = dict(Probe.objects.values_list("logical_probe_id", "state"))
    slots = list(ReviewSlot.objects.order_by("pk").values_list("pk", "reviewer_id"))
    out = StringIO()
    call_command("load_demo", "--count", COUNT, "--stage", stdout=out)
    assert _snapshot() == before
    assert dict(Probe.objects.values_list("logical_probe_id", "state")) == probes
    assert list(ReviewSlot.objects.order_by("pk").values_list("pk", "reviewer_id")) == slots
    again = [line for line in out.getvalue().splitlines() if line.startswith("Staged: ")]
    assert [line.split(":")[1].strip() for line in again] == [
        "Source review work",
        "Probes",
        "Release",
        "Review work",
        "Evaluation",
        "Debate",
        "Double annotation",
    ]
    assert all(
        word in out.getvalue()
        for word in ("already there", "compiled already", "left as it is", "no new compile run")
    )


def _snapshot() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_without_stage_load_demo_stays_unstaged(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("load_demo", "--count", "3", stdout=StringIO())
    assert not Probe.objects.exists() and not EvalRun.objects.exists() and not SolveRun.objects.exists()


def test_the_demo_double_annotates_a_sample_and_the_agreement_shows_each_perturbation(staged):
    from annotation.models import IndependentPassDocument, SecondAnnotation

    assert "Double annotation: annotator2 annotated" in staged
    seconds = list(SecondAnnotation.objects.select_related("annotator"))
    assert seconds and {s.annotator.username for s in seconds} == {"annotator2"}
    docs = IndependentPassDocument.objects.filter(second__in=seconds)
    assert docs.count() == 3 * len(seconds)
    # every sampled parent's first annotation is approved, and the second annotator sees none of it
    client = _client("annotator2")
    problem_id = seconds[0].parent.problem_id
    assert client.get(f"/api/parents/{problem_id}/passes/1/").status_code == 403
    assert client.get(f"/problems/{problem_id}/independent/passes/1/").status_code == 200
    admin = _client("admin")
    assert admin.get("/agreement/").status_code == 200
