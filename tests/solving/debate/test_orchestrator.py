"""The debate loop with scripted solvers, pruner and selector (no database, no network)."""

import pytest

from solving.debate.orchestrator import DebateConfig, SolveRequest, parse_selection, run_debate
from solving.debate.pruner import Label, Memory


def scripted(*answers: str):
    """A solver that answers round r with ``answers[r - 1]`` and records what it was shown."""
    seen: list[SolveRequest] = []

    def solve(request: SolveRequest) -> str:
        seen.append(request)
        return f"<reasoning>round {request.round}</reasoning><answer>{answers[request.round - 1]}</answer>"

    solve.seen = seen
    return solve


def labels(mapping: dict[str, str]):
    return lambda memory: mapping.get(memory.solver, "not sure")


def test_consensus_in_round_one_stops_early():
    solvers = {"gpt": scripted("21.5 N"), "gemini": scripted("21.46\\,\\text{N}"), "claude": scripted("25 N")}
    transcript = run_debate(solvers, pruner=labels({}), selector=lambda m: "1")
    assert transcript.decided_by == "consensus"
    assert transcript.rounds == 1
    assert transcript.final_solver == "gpt"
    assert transcript.final_answer == "21.5 N"
    assert transcript.final_rendered == "21.5\\,\\mathrm{N}"
    assert [(t.round, t.solver) for t in transcript.turns] == [(1, "gpt"), (1, "gemini"), (1, "claude")]
    assert transcript.prunes == () and transcript.selection is None
    assert (transcript.calls.solver, transcript.calls.pruner, transcript.calls.selector) == (3, 0, 0)
    assert transcript.votes[0].vote.clusters == ((0, 1), (2,))


def test_false_tie_is_resolved_by_value_and_string_voting_escalates():
    answers = ("\\frac{4mRv_0}{B^2d^2}", "4mRv_{0}/B^{2}d^{2}", "\\frac{2mRv_0}{B^2d^2}")
    make = lambda: {f"s{i}": scripted(a, a, a) for i, a in enumerate(answers)}  # noqa: E731
    by_value = run_debate(make(), pruner=labels({}), selector=lambda m: None)
    assert (by_value.decided_by, by_value.rounds, by_value.calls.solver) == ("consensus", 1, 3)
    by_string = run_debate(
        make(), pruner=labels({}), selector=lambda m: None, config=DebateConfig(value_voting=False)
    )
    assert (by_string.decided_by, by_string.rounds, by_string.calls.solver) == ("default_solver", 3, 9)


def test_pruning_keeps_only_yes_memories_for_the_next_round():
    solvers = {"a": scripted("1 N", "2 N"), "b": scripted("2 N", "2 N"), "c": scripted("3 N", "3 N")}
    transcript = run_debate(solvers, pruner=labels({"a": "no", "b": "Verdict: yes", "c": "not sure"}))
    assert transcript.decided_by == "consensus" and transcript.rounds == 2
    assert [(p.solver, p.label, p.kept) for p in transcript.prunes] == [
        ("a", Label.NO, False),
        ("b", Label.YES, True),
        ("c", Label.NOT_SURE, False),
    ]
    assert solvers["a"].seen[1].peers == (Memory("b", "2 N", "round 1"),)
    assert all(t.peers == ("b",) for t in transcript.turns if t.round == 2)
    assert transcript.final_answer == "2 N"


def test_lenient_pruning_keeps_not_sure():
    solvers = {"a": scripted("1 N", "2 N"), "b": scripted("2 N", "2 N"), "c": scripted("3 N", "3 N")}
    run_debate(
        solvers,
        pruner=labels({"b": "yes", "c": "not sure", "a": "no"}),
        config=DebateConfig(strict_pruning=False),
    )
    assert [peer.solver for peer in solvers["a"].seen[1].peers] == ["b", "c"]


def test_all_masked_re_solves_without_peer_context():
    solvers = {"a": scripted("1 N", "4 N"), "b": scripted("2 N", "4 N"), "c": scripted("3 N", "5 N")}
    transcript = run_debate(solvers, pruner=labels({"a": "no", "b": "no", "c": "not sure"}))
    assert all(request.peers == () for solver in solvers.values() for request in solver.seen)
    assert transcript.rounds == 2 and transcript.final_answer == "4 N"
    assert all(not p.kept for p in transcript.prunes)


def test_two_rounds_then_selection():
    solvers = {
        "a": scripted("1 N", "1 N", "1 N"),
        "b": scripted("2 N", "2 N", "2 N"),
        "c": scripted("3 N", "3 N", "3 N"),
    }
    shown = []
    transcript = run_debate(
        solvers,
        pruner=labels({"a": "yes", "b": "yes", "c": "yes"}),
        selector=lambda m: shown.append(m) or "Candidate 3 is most reliable",
    )
    assert transcript.rounds == 3
    assert transcript.decided_by == "selection"
    assert transcript.final_solver == "c" and transcript.final_rendered == "3\\,\\mathrm{N}"
    assert transcript.selection.chosen == "c"
    assert [m.solver for m in shown[0]] == ["a", "b", "c"]
    assert (transcript.calls.solver, transcript.calls.pruner, transcript.calls.selector) == (9, 6, 1)
    assert [v.round for v in transcript.votes] == [1, 2, 3]
    assert all(v.vote.majority is None for v in transcript.votes)


def test_selector_abstains_defaults_to_the_designated_solver():
    solvers = {
        "gpt": scripted("1 N", "1 N", "1 N"),
        "gemini": scripted("2 N", "2 N", "2 N"),
        "claude": scripted("3 N", "3 N", "3 N"),
    }
    transcript = run_debate(
        solvers,
        pruner=labels({}),
        selector=lambda m: "I abstain",
        config=DebateConfig(default_solver="gemini"),
    )
    assert (transcript.decided_by, transcript.final_solver, transcript.final_answer) == (
        "default_solver",
        "gemini",
        "2 N",
    )
    assert transcript.selection.chosen is None and transcript.selection.raw_output == "I abstain"


def test_selector_picking_an_empty_answer_counts_as_abstaining():
    solvers = {
        "a": scripted("", "", ""),
        "b": scripted("2 N", "2 N", "2 N"),
        "c": scripted("3 N", "3 N", "3 N"),
    }
    transcript = run_debate(
        solvers, pruner=labels({}), selector=lambda m: "a", config=DebateConfig(default_solver="b")
    )
    assert (transcript.decided_by, transcript.final_answer) == ("default_solver", "2 N")


def test_malformed_answers_are_re_extracted_before_voting():
    def boxed(request):
        return "<reasoning>so T = \\boxed{21.5 N}</reasoning><answer></answer>"

    def empty(request):
        return "<reasoning>I give up</reasoning><answer>N/A</answer>"

    transcript = run_debate(
        {"a": boxed, "b": empty, "c": scripted("21.5 N")},
        pruner=labels({}),
        normalizer=lambda r: "Final answer: 21.5 N",
    )
    assert [(t.answer, t.answer_source) for t in transcript.turns] == [
        ("21.5 N", "deterministic"),
        ("21.5 N", "light_model"),
        ("21.5 N", "emitted"),
    ]
    assert transcript.calls.normalizer == 1 and transcript.decided_by == "consensus"


def test_level_five_single_solver_takes_the_answer_as_it_stands():
    solver = scripted("about 5 kN upward")
    transcript = run_debate({"gemini": solver})
    assert transcript.decided_by == "single_solver"
    assert transcript.final_answer == transcript.final_rendered == "about 5 kN upward"
    assert transcript.final_canonical is None and transcript.votes == ()
    assert transcript.calls.total == 1


def test_no_pruning_ablation_shares_every_memory():
    solvers = {"a": scripted("1 N", "2 N"), "b": scripted("2 N", "2 N"), "c": scripted("3 N", "3 N")}
    transcript = run_debate(solvers, config=DebateConfig(pruning=False))
    assert [peer.solver for peer in solvers["a"].seen[1].peers] == ["a", "b", "c"]
    assert transcript.calls.pruner == 0


def test_deterministic_given_the_callables():
    def make():
        return {
            "a": scripted("1 N", "2 N", "2 N"),
            "b": scripted("2 N", "3 N", "4 N"),
            "c": scripted("3 N", "4 N", "2 N"),
        }

    first = run_debate(make(), pruner=labels({"b": "yes"}), selector=lambda m: "2")
    second = run_debate(make(), pruner=labels({"b": "yes"}), selector=lambda m: "2")
    assert first == second


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"solvers": {}}, "at least one"),
        ({"solvers": {"a": scripted("1"), "b": scripted("1")}}, "pruner is required"),
    ],
)
def test_invalid_configuration(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_debate(**kwargs)


def test_unknown_default_solver():
    with pytest.raises(ValueError, match="unknown default solver"):
        run_debate({"a": scripted("1")}, config=DebateConfig(default_solver="z"))


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("2", "gemini"),
        ("Solver 3", "claude"),
        ("I trust gpt most", "gpt"),
        ("Candidate 1, no wait, 2", "gemini"),
        ("abstain", None),
        ("7", None),
        (None, None),
        ("", None),
    ],
)
def test_parse_selection(text, chosen):
    assert parse_selection(text, ("gpt", "gemini", "claude")) == chosen
