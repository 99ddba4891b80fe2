"""Debate runs through the real pipeline (solving executor, Celery eager) with scripted models."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import TestCase
from django.urls import reverse

from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError
from solving.models import DebateRun, DebateTurn, SolveResponse, SolveRun
from solving.runs import (
    comparable_runs,
    debate_run_create,
    public_problem,
    run_stats,
    script_key,
)
from tests.factories import ParentProblemFactory, scripted

pytestmark = pytest.mark.django_db


def _out(answer: str, why: str = "Apply Newton's second law.") -> str:
    return f"<reasoning>{why}</reasoning>\n<answer>{answer}</answer>"


def _parent(pid: str = "dbt_1", answer: str = "4 N", answer_type: str = "fill", options=None):
    return ParentProblemFactory(
        problem_id=pid,
        stem=f"Problem {pid}: a 2 kg cart accelerates at 2 m/s^2.",
        query="What net force acts on it?",
        answer=answer,
        answer_type=answer_type,
        options=options or [],
    )


def _solvers(rounds: dict[str, list[str]], parent, *, price=(0, 0)) -> list[str]:
    """Three scripted solvers; ``rounds[name][r-1]`` is the answer in round r."""
    text, _ = public_problem(parent)
    names = []
    for name, answers in rounds.items():
        responses = [
            {"match": script_key(f"re-solve round {r}", text), "outputs": [_out(answers[r - 1])]}
            for r in range(len(answers), 1, -1)
        ]
        responses.append({"match": text, "outputs": [_out(answers[0])]})
        config = scripted(name, responses, default=_out(""))
        config.price_in_per_mtok, config.price_out_per_mtok = Decimal(price[0]), Decimal(price[1])
        config.save()
        names.append(name)
    return names


def committed():
    """Run on-commit callbacks (the dispatch) as a real commit would; Celery is eager in these tests."""
    return TestCase.captureOnCommitCallbacks(execute=True)


def _debate(names, parent, **kwargs) -> SolveRun:
    with committed():
        run = debate_run_create(solver_names=names, parent_ids=[parent.problem_id], **kwargs)
    run.refresh_from_db()
    return run


def _response(run: SolveRun) -> SolveResponse:
    return run.responses.get()


def _stages(response: SolveResponse) -> list[tuple[int, str]]:
    return list(response.turns.order_by("seq").values_list("round", "stage"))


def test_consensus_in_round_one_stops_early(eager):
    parent = _parent()
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["3 N"]}, parent)
    scripted("pr", [], default='{"label": "yes"}')
    run = _debate(names, parent, pruner="pr")
    row = _response(run)
    assert run.status == SolveRun.Status.COMPLETED
    assert row.status == "completed" and row.calls == 3 and row.correct is True and row.credit == 1.0
    assert _stages(row) == [(1, "solve"), (1, "solve"), (1, "solve"), (1, "vote"), (1, "selection")]
    vote = row.turns.get(stage="vote").parsed
    assert vote["has_majority"] is True and vote["groups"] == [["sa", "sb"], ["sc"]]
    assert row.turns.get(stage="selection").parsed["decided_by"] == "consensus"
    assert run_stats(run).early_stopped == 1
    # nothing private reached a prompt
    for turn in row.turns.filter(stage="solve"):
        assert "SECRET" not in turn.request["user"] and "SECRET" not in turn.request["system"]


def test_false_tie_is_resolved_by_value_not_by_string(eager):
    parent = _parent(answer="500 N")
    names = _solvers(
        {
            "sa": ["0.5 kN", "0.5 kN", "0.5 kN"],
            "sb": ["500 N", "500 N", "500 N"],
            "sc": ["3 N", "3 N", "3 N"],
        },
        parent,
    )
    scripted("pr", [], default='{"label": "yes"}')
    by_value = _response(_debate(names, parent, pruner="pr"))
    assert by_value.calls == 3 and by_value.correct is True
    assert by_value.turns.get(stage="vote").parsed["groups"] == [["sa", "sb"], ["sc"]]
    by_string = _response(_debate(names, parent, pruner="pr", settings={"value_voting": False}))
    assert by_string.turns.filter(stage="vote").count() == 3  # the false tie escalated to two re-solve rounds
    assert by_string.calls == 3 + (3 + 3) * 2  # no selector: the default solver decides
    assert by_string.turns.get(stage="selection").parsed["decided_by"] == "default_solver"


def test_all_masked_resolves_without_peer_context(eager):
    parent = _parent()
    names = _solvers({"sa": ["1 N", "4 N"], "sb": ["2 N", "4 N"], "sc": ["3 N", "5 N"]}, parent)
    scripted("pr", [], default='{"label": "no"}')
    row = _response(_debate(names, parent, pruner="pr"))
    assert row.calls == 3 + 3 + 3 and row.final_answer and row.correct is True
    mask = row.turns.get(stage="mask").parsed
    assert mask["all_masked"] is True and mask["kept"] == []
    round2 = row.turns.filter(stage="solve", round=2)
    assert round2.count() == 3
    for turn in round2:
        assert (
            "judged unreliable" in turn.request["user"] and "Solution 1 (answer" not in turn.request["user"]
        )
        assert turn.parsed["peers"] == []
    prunes = row.turns.filter(stage="prune")
    assert [p.parsed["label"] for p in prunes] == ["no", "no", "no"]
    assert _stages(row)[3:8] == [(1, "vote"), (2, "prune"), (2, "prune"), (2, "prune"), (2, "mask")]


def test_two_rounds_then_selection_and_abstention(eager):
    parent = _parent(answer="2 N")
    text, _ = public_problem(parent)
    names = _solvers({"sa": ["1 N"] * 3, "sb": ["2 N"] * 3, "sc": ["3 N"] * 3}, parent)
    scripted(
        "pr",
        [{"match": script_key("verify: 2 N", text), "outputs": ['{"label": "yes"}']}],
        default='{"label": "not sure"}',
    )
    scripted("sel", [], default='{"choice": "2"}')
    row = _response(_debate(names, parent, pruner="pr", selector="sel"))
    assert row.calls == 3 + (3 + 3) * 2 + 1 == 16
    assert row.correct is True
    selection = row.turns.get(stage="selection").parsed
    assert selection["decided_by"] == "selection" and selection["final_solver"] == "sb"
    kept = row.turns.filter(stage="mask").first().parsed
    assert kept["kept"] == ["sb"] and kept["labels"]["sa"] == "not sure"
    resolve = row.turns.filter(stage="solve", round=2).first()
    assert (
        "Solution 1 (answer: 2 N)" in resolve.request["user"] and "answer: 1 N" not in resolve.request["user"]
    )
    # the selector abstains → the designated default solver (the first) answers
    ModelConfig.objects.filter(name="sel").update(extra={"default": '{"choice": "abstain"}'})
    abstained = _response(_debate(names, parent, pruner="pr", selector="sel"))
    assert abstained.turns.get(stage="selection").parsed["decided_by"] == "default_solver"
    assert abstained.turns.get(stage="selection").parsed["final_solver"] == "sa"
    assert abstained.correct is False


def test_level_five_single_solver_one_call_no_canonicalizer(eager):
    parent = _parent(answer="4 N")
    config = scripted("solo", [], default=_out("4.0 N"))
    row = _response(_debate([config.name], parent, level=5))
    assert row.calls == 1 and row.final_answer == "4.0 N" and row.correct is True
    assert _stages(row) == [(1, "solve"), (1, "selection")]
    assert row.turns.get(stage="selection").parsed["decided_by"] == "single_solver"


def test_infra_failure_is_missing_not_an_answer(eager):
    parent = _parent()
    _solvers({"sa": ["4 N"], "sc": ["4 N"]}, parent)
    scripted("sb", [], default={"error": 500})
    scripted("pr", [], default='{"label": "yes"}')
    run = _debate(["sa", "sb", "sc"], parent, pruner="pr")
    row = _response(run)
    assert (
        row.status == "infra_missing"
        and row.final_answer == ""
        and row.credit is None
        and row.correct is None
    )
    assert "sb" in row.error
    assert row.calls == 2  # sa answered, sb failed after its retries; nothing more was asked
    assert row.turns.filter(stage="solve").count() == 2
    summary = run_stats(run)
    assert summary.solve_acc.value is None and summary.solve_acc.lower == 0 and summary.solve_acc.upper == 1


def test_cost_and_tokens_add_up(eager):
    parents = [_parent("dbt_1", "4 N"), _parent("dbt_2", "4 N")]
    for index, parent in enumerate(parents):
        # distinct names per parent would not share the run: use one script list per solver instead
        text, _ = public_problem(parent)
        for name, answers in {"sa": ["4 N"], "sb": ["5 N", "4 N"], "sc": ["6 N", "4 N"]}.items():
            config = ModelConfig.objects.filter(name=name).first() or scripted(name, [], default=_out(""))
            responses = list(config.extra["responses"])
            if index == 1 and len(answers) > 1:
                responses.append(
                    {"match": script_key("re-solve round 2", text), "outputs": [_out(answers[1])]}
                )
            responses.append({"match": text, "outputs": [_out(answers[0] if index == 1 else "4 N")]})
            config.extra = {**config.extra, "responses": responses}
            config.price_in_per_mtok, config.price_out_per_mtok = Decimal(5), Decimal(30)
            config.save()
    pruner = scripted("pr", [], default='{"label": "yes"}')
    pruner.price_in_per_mtok, pruner.price_out_per_mtok = Decimal(2), Decimal(12)
    pruner.save()
    with committed():
        run = debate_run_create(
            solver_names=["sa", "sb", "sc"], pruner="pr", parent_ids=[p.problem_id for p in parents]
        )
    run.refresh_from_db()
    rows = list(run.responses.order_by("parent__problem_id"))
    assert [r.calls for r in rows] == [3, 9]
    for row in rows:
        turns = list(row.turns.all())
        assert row.cost_usd > 0
        assert sum((t.cost_usd for t in turns), Decimal(0)) == row.cost_usd
        assert sum(t.input_tokens for t in turns) == row.input_tokens
        assert sum(t.output_tokens for t in turns) == row.output_tokens
        assert sum(1 for t in turns if t.model_id) == row.calls
        assert all(t.cost_usd == 0 for t in turns if t.stage in ("vote", "mask", "selection"))
    stats = run_stats(run)
    assert stats.cost_usd == sum((r.cost_usd for r in rows), Decimal(0))
    assert stats.calls == 12 and stats.avg_calls == 6 and stats.early_stopped == 1
    assert stats.tokens == sum(r.input_tokens + r.output_tokens for r in rows)


def test_create_validation_refuses_bad_input_and_keeps_nothing():
    parent = _parent()
    for name in ("sa", "sb", "sc"):
        scripted(name, [], default=_out("1 N"))
    bad = [
        ({"solver_names": ["sa", "sb"]}, "solvers_invalid"),
        ({"solver_names": ["sa", "sa", "sb"]}, "solvers_invalid"),
        ({"solver_names": ["sa", "sb", "nope"]}, "model_unknown"),
        ({"solver_names": ["sa", "sb", "sc"], "level": 5}, "solvers_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "level": 6}, "level_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "settings": {"rounds": 2}}, "settings_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "settings": {"max_resolve_rounds": 3}}, "settings_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "settings": {"pruning": "yes"}}, "settings_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "settings": {"rel_tol": 0}}, "settings_invalid"),
        ({"solver_names": ["sa", "sb", "sc"], "settings": {"ocr": "magic"}}, "settings_invalid"),
    ]
    for kwargs, code in bad:
        with pytest.raises(ApplicationError) as caught:
            debate_run_create(parent_ids=[parent.problem_id], enqueue=False, **kwargs)
        assert caught.value.code == code, kwargs
    ModelConfig.objects.filter(name="sc").update(is_active=False)
    with pytest.raises(ApplicationError) as caught:
        debate_run_create(solver_names=["sa", "sb", "sc"], parent_ids=[parent.problem_id], enqueue=False)
    assert caught.value.code == "model_inactive"
    assert SolveRun.objects.count() == 0 and DebateRun.objects.count() == 0


def test_same_provider_warns_and_pruner_defaults_to_second_solver():
    parent = _parent()
    for name in ("sa", "sb", "sc"):
        scripted(name, [], default=_out("1 N"))
    run = debate_run_create(solver_names=["sa", "sb", "sc"], parent_ids=[parent.problem_id], enqueue=False)
    assert run.debate.pruner.name == "sb"
    assert any("share a provider" in w for w in run.manifest["debate_warnings"])
    assert run.responses.count() == 1 and run.kind == "debate"


def test_demo_debate_beats_best_single_solver_with_fewer_calls_than_full_debate(eager):
    from solving.management.commands.load_debate_demo import debate_demo_load

    with committed():
        result = debate_demo_load(count=20, launch=True)
    rows, same = comparable_runs([*result.single_run_ids, result.debate_run_id])
    assert same
    by_label = {r.label: r for r in rows}
    singles = [by_label[n] for n in ("scripted-solver-a", "scripted-solver-b", "scripted-solver-c")]
    assert [s.binary_acc.value for s in singles] == [0.70, 0.60, 0.55]
    assert [s.calls for s in singles] == [20, 20, 20]
    debate = next(r for r in rows if r.run.kind == "debate")
    assert debate.binary_acc.value == 0.75 and debate.solve_acc.value == 0.75
    assert debate.early_stopped == 16 and debate.early_share == 0.8
    assert debate.calls == 16 * 3 + 9 + 3 * 16 == 105
    assert debate.max_calls == 20 * 16 and debate.calls_saved == 320 - 105
    assert debate.cost_usd > max(s.cost_usd for s in singles)
    # the private answer is in the admin-only script, never in a prompt
    for turn in DebateTurn.objects.filter(response__run_id=result.debate_run_id, stage="solve")[:20]:
        assert "demo_script" not in turn.request["user"]


# ------------------------------------------------------------------------------------------------ pages and API


@pytest.fixture
def finished_debate(eager):
    parent = _parent()
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["3 N"]}, parent)
    scripted("pr", [], default='{"label": "yes"}')
    return _debate(names, parent, pruner="pr")


def test_pages_render_for_admin(client, admin_user_role, finished_debate):
    client.force_login(admin_user_role)
    row = _response(finished_debate)
    page = client.get(reverse("solving:debate_run_detail", args=[finished_debate.pk]))
    assert page.status_code == 200 and "Early-stopped" in page.content.decode()
    transcript = client.get(reverse("solving:debate_transcript", args=[row.pk])).content.decode()
    assert "Round 1" in transcript and "sa" in transcript and "4 N" in transcript
    assert "Reference answer" in transcript  # admins see the reference
    compare = client.get(reverse("solving:debate_compare") + f"?runs={finished_debate.pk}").content.decode()
    assert "SolveAcc" in compare and "debate" in compare


def test_launch_form_creates_a_run_and_reports_errors(client, admin_user_role, eager):
    parent = _parent()
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["4 N"]}, parent)
    client.force_login(admin_user_role)
    url = reverse("solving:debate_run_list")
    bad = client.post(
        url,
        {
            "solver_1": "sa",
            "solver_2": "sb",
            "solver_3": "",
            "level": 1,
            "parent_ids": parent.problem_id,
            "max_resolve_rounds": 2,
            "rel_tol": 0.01,
        },
    )
    assert bad.status_code == 400 and SolveRun.objects.count() == 0
    assert "three solvers" in bad.content.decode()
    with committed():
        ok = client.post(
            url,
            {
                "solver_1": names[0],
                "solver_2": names[1],
                "solver_3": names[2],
                "level": 1,
                "parent_ids": parent.problem_id,
                "max_resolve_rounds": 1,
                "rel_tol": 0.02,
                "pruning": "on",
                "strict_pruning": "on",
                "value_voting": "on",
            },
        )
    assert ok.status_code == 302
    run = SolveRun.objects.get()
    assert run.debate.settings["max_resolve_rounds"] == 1 and run.debate.settings["rel_tol"] == 0.02


def test_api_create_detail_transcript(api_client, admin_user_role, eager):
    parent = _parent()
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["4 N"]}, parent)
    api_client.force_authenticate(admin_user_role)
    with committed():
        created = api_client.post(
            "/api/debate/runs/",
            {
                "solvers": names,
                "level": 1,
                "parent_ids": [parent.problem_id],
                "settings": {"max_resolve_rounds": 1},
            },
            format="json",
        )
    assert created.status_code == 201, created.data
    run_id = created.data["id"]
    detail = api_client.get(f"/api/debate/runs/{run_id}/").data
    assert detail["calls"] == 3 and detail["early_stopped"] == 1 and detail["binary_acc"]["value"] == 1.0
    listing = api_client.get("/api/debate/runs/").data
    assert [r["id"] for r in listing["results"]] == [run_id] and listing["next"] is None
    row = SolveRun.objects.get(pk=run_id).responses.get()
    transcript = api_client.get(f"/api/debate/responses/{row.pk}/transcript/").data
    assert [t["stage"] for t in transcript["turns"]] == ["solve", "solve", "solve", "vote", "selection"]
    refused = api_client.post(
        "/api/debate/runs/", {"solvers": names[:2], "parent_ids": [parent.problem_id]}, format="json"
    )
    assert refused.status_code == 400 and SolveRun.objects.count() == 1
    # a run's parents are parent_ids in every body: the old name plans nothing
    renamed = api_client.post(
        "/api/debate/runs/", {"solvers": names, "parents": [parent.problem_id]}, format="json"
    )
    assert (
        renamed.status_code == 400 and renamed.data["code"] == "no_parents" and SolveRun.objects.count() == 1
    )
    settings_list = api_client.post(
        "/api/debate/runs/",
        {"solvers": names, "parent_ids": [parent.problem_id], "settings": [1]},
        format="json",
    )
    assert settings_list.status_code == 400 and settings_list.data["code"] == "validation_error"
    assert SolveRun.objects.count() == 1


def test_debate_command_launches_and_reports(eager, capsys):
    from django.core.management import CommandError, call_command

    parent = _parent()
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["4 N"]}, parent)
    call_command(
        "debate",
        "--solvers",
        ",".join(names),
        "--parents",
        parent.problem_id,
        "--rounds",
        "1",
        "--no-value-voting",
        "--inline",
    )
    out = capsys.readouterr().out
    assert "accuracy 1.000" in out and "calls 3" in out and "early-stopped 1/1" in out
    run = SolveRun.objects.get()
    assert run.debate.settings == {"max_resolve_rounds": 1, "value_voting": False}
    with pytest.raises(CommandError, match="exactly one solver"):
        call_command("debate", "--solvers", ",".join(names), "--parents", parent.problem_id, "--level", "5")
    assert SolveRun.objects.count() == 1


@pytest.mark.parametrize("level", [2, 4])
def test_front_end_levels_record_their_steps_and_feed_the_solvers(eager, level):
    from tests.browser.conftest import incline_diagram
    from tests.factories import ProblemImageFactory

    parent = _parent(answer="4 N")
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1, data=incline_diagram())
    for name in ("sa", "sb", "sc"):
        scripted(name, [], default=_out("4 N"))
    front = ModelConfig.objects.create(
        name="fe-sim",
        provider="simulated",
        model="sim",
        extra={"seed": 7},
        price_in_per_mtok=Decimal(1),
        price_out_per_mtok=Decimal(2),
    )
    run = _debate(["sa", "sb", "sc"], parent, level=level, frontend=front.name)
    row = _response(run)
    assert row.status == "completed" and row.correct is True
    front_turns = row.turns.filter(round=0)
    assert front_turns.filter(stage="frontend").exists()
    model_calls = front_turns.filter(model=front)
    assert model_calls.exists() and row.calls == 3 + model_calls.count()
    assert sum((t.cost_usd for t in row.turns.all()), Decimal(0)) == row.cost_usd
    stages = set(model_calls.values_list("stage", flat=True))
    assert "reconstruct" in stages
    if level == 4:
        assert {"crop_propose", "ocr"} <= stages
        # the solvers never see the original separate text+diagram pair at Level 4, only the front-end's output
    solve = row.turns.filter(stage="solve").first()
    assert solve.request["images"], "the diagram reaches the solvers"
    for turn in row.turns.exclude(request={}):
        assert "SECRET" not in turn.request.get("user", "") and "SECRET" not in turn.request.get("system", "")


def test_level_one_sends_text_only(eager):
    from tests.factories import ProblemImageFactory

    parent = _parent()
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1)
    names = _solvers({"sa": ["4 N"], "sb": ["4 N"], "sc": ["4 N"]}, parent)
    row = _response(_debate(names, parent))
    assert all(t.request["images"] == [] for t in row.turns.filter(stage="solve"))
