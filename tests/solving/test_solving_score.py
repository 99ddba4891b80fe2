"""The pure solving score (App. B.4) and solve-link (App. D.3, Table 17), on hand-computed cases."""

from __future__ import annotations

import pytest

from solving.scoring import (
    choice_letters,
    credit_from_components,
    extract_boxed_answer,
    match_answer,
    solve_acc,
    solve_link,
)

OPTIONS = [
    {"id": "A", "text": "2 N"},
    {"id": "B", "text": "4 N"},
    {"id": "C", "text": "6 N"},
    {"id": "D", "text": "8 N"},
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"First \boxed{1} then \boxed{\frac{1}{2}\,\text{m}}", r"\frac{1}{2}\,\text{m}"),
        (r"nested \boxed{a_{x}=3} end", "a_{x}=3"),
        (r"empty \boxed{} but earlier \boxed{5 N}", "5 N"),
        ("<reasoning>work</reasoning><answer>C</answer>", "C"),
        (
            r"<reasoning>\boxed{4}</reasoning><answer>B</answer>",
            "4",
        ),  # the last boxed answer wins over the tag
        ("no final answer at all", ""),
        ("", ""),
        (None, ""),
    ],
)
def test_extract_boxed_answer(text, expected):
    assert extract_boxed_answer(text) == expected


@pytest.mark.parametrize(
    ("extracted", "reference", "expected"),
    [
        ("B", "B", True),
        ("(B)", "B", True),
        ("B.", "b", True),
        ("b", "B", True),
        ("Option B", "B", True),
        ("A, C", "AC", True),
        ("C A", "AC", True),
        ("A and C", "CA", True),
        ("AC", "A", False),
        ("A", "AC", False),
        ("4 N", "B", True),  # repeats option B's text
        ("D", "B", False),
        ("", "B", False),
        ("Z", "B", False),
    ],
)
def test_match_choice(extracted, reference, expected):
    assert match_answer(extracted, reference, "choice", OPTIONS) is expected


@pytest.mark.parametrize(
    ("extracted", "reference", "expected"),
    [
        ("3 m/s", "3.0 m/s", True),
        ("300 cm/s", "3 m/s", True),
        ("2.02 N", "2 N", True),
        ("2.1 N", "2 N", False),
        ("0.5 kN", "500 N", True),
        ("3 m", "3 s", False),
        (r"3\,\text{m/s}", "3 m/s", True),
        ("30°", "30", False),
        (r"mg\sin\theta", r"m g \sin \theta", True),
        ("North", "north.", True),
        ("", "3 m/s", False),
        ("3 m/s", "", False),
    ],
)
def test_match_fill_in_is_value_aware(extracted, reference, expected):
    assert match_answer(extracted, reference, "fill") is expected


def test_match_refuses_expert_types():
    with pytest.raises(ValueError):
        match_answer("x", "x", "calc")


def test_choice_letters_only_valid_options():
    assert choice_letters("AC", OPTIONS) == frozenset("AC")
    assert choice_letters("AA", OPTIONS) == frozenset()


def test_credit_from_components_is_sum_over_sum():
    assert credit_from_components([(2, 4), (1, 1), (0, 5)]) == pytest.approx(3 / 10)
    assert credit_from_components([(1.5, 1.5)]) == 1.0


@pytest.mark.parametrize("bad", [[], [(1, 0)], [(-1, 2)], [(3, 2)]])
def test_credit_rejects_invalid_rubrics(bad):
    with pytest.raises(ValueError):
        credit_from_components(bad)


def test_solve_acc_is_the_equal_parent_mean():
    stat = solve_acc({"P1": 1.0, "P2": 0.0, "P3": 0.5, "P4": 0.3})
    assert stat.value == pytest.approx(1.8 / 4)
    assert stat.lower == stat.upper == pytest.approx(0.45)
    assert (stat.parents, stat.missing) == (4, 0)


def test_solve_acc_missing_parents_give_bounds_not_a_value():
    stat = solve_acc([1.0, None, 0.5, None])
    assert stat.value is None
    assert stat.lower == pytest.approx(1.5 / 4)  # missing as 0
    assert stat.upper == pytest.approx(3.5 / 4)  # missing as 1
    assert (stat.parents, stat.missing) == (4, 2)
    assert solve_acc([]).value is None and solve_acc([]).parents == 0


def test_solve_link_averages_within_parents_first():
    g_items = [
        ("P1", 1),
        ("P1", 1),
        ("P1", 0),  # correct, parent mean 2/3
        ("P2", 0),  # correct, parent mean 0
        ("P3", 1),
        ("P3", 0),  # wrong, 1/2
        ("P4", 0),
        ("P4", 0),
        ("P4", 0),
        ("P4", 1),  # wrong, 1/4
        ("P5", 1),  # no solve verdict: left out
        ("P7", None),
        ("P1", None),
    ]  # infra-missing probes carry no G
    correct = {"P1": True, "P2": True, "P3": False, "P4": False, "P5": None, "P6": True, "P7": False}
    link = solve_link(g_items, correct)
    assert link.g_correct == pytest.approx(1 / 3)  # not the probe mean 2/4
    assert link.g_wrong == pytest.approx(0.375)  # not the probe mean 2/6
    assert link.delta == pytest.approx(1 / 3 - 0.375)
    assert (link.parents_correct, link.parents_wrong) == (2, 2)
    assert (link.probes_correct, link.probes_wrong) == (4, 6)


def test_solve_link_with_an_empty_group_has_no_delta():
    link = solve_link([("P1", 1)], {"P1": True})
    assert link.g_correct == 1.0 and link.g_wrong is None and link.delta is None
