"""Per-agent normalization: the emitted answer, the deterministic extractor, the light model."""

import pytest

from solving.debate.extract import (
    extract_final_answer,
    is_malformed,
    normalize_agent_answer,
    parse_solver_output,
)


def test_well_formed_answer_is_kept_unchanged():
    result = normalize_agent_answer("<reasoning>F = ma = 21.5 N</reasoning><answer> 21.5 N </answer>")
    assert (result.answer, result.source, result.reasoning) == ("21.5 N", "emitted", "F = ma = 21.5 N")


def test_last_answer_block_wins_and_unclosed_blocks_run_to_the_end():
    assert parse_solver_output("<answer>1</answer> oops <answer>2</answer>").answer == "2"
    assert parse_solver_output("<reasoning>r</reasoning><answer>4.43 m/s^2").answer == "4.43 m/s^2"
    assert parse_solver_output("no tags at all").answer is None
    assert parse_solver_output("no tags at all").reasoning == "no tags at all"


@pytest.mark.parametrize(
    "answer",
    [None, "", "  ", "...", "N/A", "see above", "x" * 401, "<answer>5</answer>", "a\nb\nc\nd\ne\nf\ng"],
)
def test_malformed_answers(answer):
    assert is_malformed(answer) is True


@pytest.mark.parametrize("answer", ["B", "21.5 N", "a. 4.43 m/s^2; b. 21.5 N"])
def test_well_formed_answers(answer):
    assert is_malformed(answer) is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so a = \\boxed{4.43\\,\\text{m/s}^{2}} and then \\boxed{\\frac{1}{2}mv^2}", "\\frac{1}{2}mv^2"),
        ("Thus \\fbox{21.5 N}.", "21.5 N"),
        ("work...\nFinal answer: 21.5 N\n", "21.5 N"),
        ("Answer: 3.0 m\nwait, recheck\n**Final Answer:** 3.2 m.", "3.2 m"),
        ("Therefore the final answer is 8.0 J. Done.", "8.0 J"),
        ("so the answer is 0.12 m", "0.12 m"),
        ("nothing conclusive here", None),
    ],
)
def test_extract_final_answer(text, expected):
    assert extract_final_answer(text) == expected


def test_option_letters_only_for_multiple_choice():
    text = "Option A fails the energy check, so I pick option (C) as stated in (C)."
    assert extract_final_answer(text) is None
    assert extract_final_answer(text, option_letters="ABCD") == "C"
    assert extract_final_answer("I think (E) is out of range", option_letters="ABCD") is None


def test_deterministic_extraction_comes_before_the_light_model():
    calls = []
    result = normalize_agent_answer(
        "<reasoning>... \\boxed{5 kN}</reasoning><answer></answer>",
        light_model=lambda r: calls.append(r) or "9 N",
    )
    assert (result.answer, result.source, calls) == ("5 kN", "deterministic", [])


def test_light_model_is_the_second_stage():
    seen = []

    def light(reasoning: str) -> str:
        seen.append(reasoning)
        return "<answer>0.29 µF</answer>"

    result = normalize_agent_answer(
        "<reasoning>C = Q/V, about 0.29 microfarad</reasoning><answer>...</answer>", light_model=light
    )
    assert (result.answer, result.source) == ("0.29 µF", "light_model")
    assert seen == ["C = Q/V, about 0.29 microfarad"]


def test_light_model_reply_without_tags_and_an_empty_reply():
    assert normalize_agent_answer("<answer></answer>", light_model=lambda r: "Final answer: B").answer == "B"
    assert normalize_agent_answer("<answer></answer>", light_model=lambda r: "21.5 N").answer == "21.5 N"
    result = normalize_agent_answer("<answer></answer>", light_model=lambda r: "  ")
    assert (result.answer, result.source) == ("", "none")
    assert normalize_agent_answer("<answer></answer>").source == "none"
