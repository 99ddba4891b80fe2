"""Solving pages and API: launch, grading with rubric reuse and save-and-next, reference visibility, the results
page's Solving section (Table 2 SolveAcc column, Table 17 solve link on a hand-computed case)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import EvalRequest, EvalRun, ItemScore
from models_registry.models import ModelConfig
from solving.models import SolveResponse, SolveRun
from solving.runs import solve_run_create
from tests.endpoint_matrix.evaluation_cases import _probe
from tests.factories import ParentProblemFactory, scripted

from .test_solving import SCRIPT, make_parents, run_now

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, key_holder):
    """Grading is against the reference answer: an admin with the key-holder permission."""
    client.force_login(key_holder)
    return client


def test_launch_from_the_page(admin_client, eager):
    make_parents()
    model = scripted("solver", SCRIPT)
    response = admin_client.post(
        reverse("solving:solve_run_list"),
        {"model": model.pk, "parent_ids": "S_FILL, S_CHOICE\nS_CALC;S_FILL", "name": "page launch"},
    )
    run = SolveRun.objects.get(name="page launch")
    assert response.status_code == 302 and response["Location"] == reverse(
        "solving:solve_run_detail", args=[run.pk]
    )
    assert run.parent_ids == ["S_FILL", "S_CHOICE", "S_CALC"]
    page = admin_client.get(reverse("solving:solve_run_list")).content.decode()
    assert "page launch" in page


def test_launch_form_refuses_both_or_neither_source(admin_client):
    make_parents()
    model = scripted("solver", SCRIPT)
    response = admin_client.post(reverse("solving:solve_run_list"), {"model": model.pk, "parent_ids": ""})
    assert response.status_code == 400 and "exactly one of the three" in response.content.decode()
    response = admin_client.post(reverse("solving:solve_run_list"), {"model": model.pk, "parent_ids": "NOPE"})
    assert response.status_code == 400 and "Unknown parent problems" in response.content.decode()
    assert SolveRun.objects.count() == 0


def test_run_page_shows_scores_and_the_next_ungraded(admin_client, eager):
    make_parents()
    run = run_now(model=scripted("solver", SCRIPT), parent_ids=["S_CHOICE", "S_FILL", "S_CALC", "S_WRONG"])
    page = admin_client.get(reverse("solving:solve_run_detail", args=[run.pk])).content.decode()
    pending = run.responses.get(parent__problem_id="S_CALC")
    assert "Awaiting expert grading" in page
    assert reverse("solving:solve_response_grade", args=[pending.pk]) in page
    assert "bounds 0.500–0.750" in page  # SolveAcc: S_CALC not graded yet
    progress = admin_client.get(
        reverse("solving:solve_run_progress", args=[run.pk]), headers={"HX-Request": "true"}
    )
    assert progress["HX-Refresh"] == "true"


def test_response_page_labels_the_reference_for_admins(admin_client, eager):
    make_parents()
    run = run_now(model=scripted("solver", SCRIPT), parent_ids=["S_CALC"])
    row = run.responses.get()
    page = admin_client.get(reverse("solving:solve_response_detail", args=[row.pk])).content.decode()
    assert "Reference (admin only — never sent to any model)" in page
    assert "SECRET-ANSWER-5J" in page
    user_message = page.split('id="user-message">')[1].split("</pre>")[0]
    assert "SECRET" not in user_message and "UNIQ-CALC" in user_message


def test_grading_reuses_the_rubric_and_moves_to_the_next(admin_client, eager):
    make_parents()
    ParentProblemFactory(problem_id="S_CALC2", stem="UNIQ-CALC2 A pulley.", answer_type="short")
    first = run_now(model=scripted("solver-a", SCRIPT), parent_ids=["S_CALC"])
    graded = first.responses.get()
    response = admin_client.post(
        reverse("solving:solve_response_grade", args=[graded.pk]),
        {
            "description": ["energy principle", "numerical value"],
            "awarded": ["2", "1"],
            "maximum": ["2", "3"],
            "correct": "on",
            "note": "",
            "then": "next",
        },
    )
    assert response.status_code == 302  # no other ungraded response in that run → back to the run
    graded.refresh_from_db()
    assert graded.credit == pytest.approx(0.6) and graded.correct is True
    first.refresh_from_db()
    assert first.status == "completed"

    second = run_now(model=scripted("solver-b", SCRIPT), parent_ids=["S_CALC", "S_CALC2"])
    rows = {r.parent.problem_id: r for r in second.responses.select_related("parent")}
    page = admin_client.get(reverse("solving:solve_response_grade", args=[rows["S_CALC"].pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'value="energy principle"' in html and 'value="numerical value"' in html  # rubric reuse
    assert 'value="3.00"' in html and "pre-filled from the graded response" in html
    response = admin_client.post(
        reverse("solving:solve_response_grade", args=[rows["S_CALC"].pk]),
        {
            "description": ["energy principle", "numerical value"],
            "awarded": ["1", "0"],
            "maximum": ["2", "3"],
            "then": "next",
        },
    )
    assert response["Location"] == reverse("solving:solve_response_grade", args=[rows["S_CALC2"].pk])
    rows["S_CALC"].refresh_from_db()
    assert rows["S_CALC"].credit == pytest.approx(0.2) and rows["S_CALC"].correct is False


def test_invalid_grade_from_the_page_changes_nothing(admin_client, eager):
    make_parents()
    run = run_now(model=scripted("solver", SCRIPT), parent_ids=["S_CALC"])
    row = run.responses.get()
    response = admin_client.post(
        reverse("solving:solve_response_grade", args=[row.pk]),
        {"description": ["method"], "awarded": ["4"], "maximum": ["2"], "correct": "on", "then": "next"},
    )
    assert response.status_code == 400
    assert "awarded points must lie between 0 and 2.00" in response.content.decode()
    assert 'value="4"' in response.content.decode()  # the grader's input is kept
    row.refresh_from_db()
    assert (row.grading, row.credit, row.correct) == ("pending", None, None)
    assert not row.components.exists()


def test_api_lists_are_keyset_pages_newest_first(client, admin_user_role):
    make_parents()
    scripted("solver", SCRIPT)
    ids = [
        solve_run_create(model="solver", parent_ids=["S_FILL"], name=f"r{n}", enqueue=False).pk
        for n in range(3)
    ]
    client.force_login(admin_user_role)
    first = client.get("/api/solve/runs/?page_size=2").json()
    assert [r["id"] for r in first["results"]] == [ids[2], ids[1]] and first["previous"] is None
    solve_run_create(model="solver", parent_ids=["S_FILL"], name="late", enqueue=False)  # not on a later page
    second = client.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == [ids[0]] and second["next"] is None
    assert client.get("/api/solve/runs/?cursor=cD0A").status_code == 404
    assert client.get("/api/debate/runs/").json() == {"next": None, "previous": None, "results": []}


def test_api_create_detail_and_grade(client, key_holder, eager):
    make_parents()
    scripted("solver", SCRIPT)
    client.force_login(key_holder)
    created = client.post(
        "/api/solve/runs/",
        {"model": "solver", "parent_ids": ["S_CALC", "S_FILL"]},
        content_type="application/json",
    )
    assert created.status_code == 201
    run_id = created.json()["id"]
    from solving.runs import solve_run_dispatch

    solve_run_dispatch(run_id=run_id)
    detail = client.get(f"/api/solve/runs/{run_id}/").json()
    assert detail["status"] == "grading" and detail["summary"]["by_grading"] == {"pending": 1, "script": 1}
    calc = next(r for r in detail["responses"] if r["parent_id"] == "S_CALC")
    bad = client.post(
        f"/api/solve/responses/{calc['id']}/grade/",
        {"components": [{"description": "x", "awarded": "2", "maximum": "1"}], "correct": True},
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["code"] == "grade_invalid"
    good = client.post(
        f"/api/solve/responses/{calc['id']}/grade/",
        {"components": [{"description": "x", "awarded": "1", "maximum": "4"}], "correct": False},
        content_type="application/json",
    )
    assert good.status_code == 200 and good.json()["credit"] == 0.25
    detail = client.get(f"/api/solve/runs/{run_id}/").json()
    assert detail["status"] == "completed"
    listing = client.get("/api/solve/runs/").json()
    assert [r["id"] for r in listing["results"]] == [run_id] and listing["next"] is None
    assert detail["summary"]["solve_acc"]["value"] == pytest.approx((0.25 + 1.0) / 2)
    assert "SECRET" not in str(detail)


def test_results_page_solving_section_hand_computed(admin_client):
    """Table 17 on a hand-computed case: P1 (correct) G = 1, 1, 0 → 2/3; P2 (correct) G = 0 → 0;
    P3 (wrong) G = 1, 0 → 1/2. Ḡcorrect = 1/3 (parent means, not 2/4), Ḡwrong = 1/2, Δ = −1/6."""
    config = ModelConfig.objects.create(name="linked", provider="scripted", model="s")
    parents = {
        n: ParentProblemFactory(problem_id=n, answer_type="fill", answer="1 m") for n in ("P1", "P2", "P3")
    }
    run = EvalRun.objects.create(
        name="linked", conditions=["raw"], status="completed", options={"resamples": 20}
    )
    run.model_configs.set([config])
    plan = {"P1": [1, 1, 0], "P2": [0], "P3": [1, 0]}
    for parent_id, gs in plan.items():
        for i, g in enumerate(gs):
            probe = _probe(parents[parent_id], f"PAQ-LINK-{parent_id}-{i}")
            row = EvalRequest.objects.create(
                run=run,
                model=config,
                probe=probe,
                condition="raw",
                pools=["B", "L"],
                status="completed",
                raw_output="{}",
                claims=1,
            )
            ItemScore.objects.create(request=row, status="completed", C=1, G=g, J=g)
    # a probe outside L and a no-image response never count
    outside = _probe(parents["P3"], "PAQ-LINK-P3-B")
    row = EvalRequest.objects.create(
        run=run,
        model=config,
        probe=outside,
        condition="raw",
        pools=["B"],
        status="completed",
        raw_output="{}",
        claims=1,
    )
    ItemScore.objects.create(request=row, status="completed", C=None, G=1)
    solve = SolveRun.objects.create(
        name="linked solve", model=config, parent_ids=list(plan), status="completed", total=3
    )
    for parent_id, ok in (("P1", True), ("P2", True), ("P3", False)):
        SolveResponse.objects.create(
            run=solve,
            parent=parents[parent_id],
            answer_type="fill",
            status="completed",
            credit=float(ok),
            correct=ok,
            match=ok,
        )
    response = admin_client.get(reverse("evaluation:run_detail", args=[run.pk]) + f"?solve={solve.pk}")
    section = response.context["solving"]
    assert section["chosen_ids"] == [solve.pk]
    link = section["rows"][0]["link"]
    assert link.g_correct == pytest.approx(1 / 3) and link.g_wrong == pytest.approx(0.5)
    assert link.delta == pytest.approx(-1 / 6)
    assert (link.parents_wrong, link.parents_correct, link.probes_wrong, link.probes_correct) == (1, 2, 2, 4)
    assert section["rows"][0]["summary"].solve_acc.value == pytest.approx(2 / 3)
    html = response.content.decode()
    assert 'id="table-solve"' in html and "-0.167" in html and 'id="chart-solve-link"' in html
    # without a choice the latest returned run of each model is shown; an unrelated id shows nothing
    assert admin_client.get(reverse("evaluation:run_detail", args=[run.pk])).context["solving"][
        "chosen_ids"
    ] == [solve.pk]
    assert (
        admin_client.get(reverse("evaluation:run_detail", args=[run.pk]) + "?solve=999").context["solving"][
            "rows"
        ]
        == []
    )
