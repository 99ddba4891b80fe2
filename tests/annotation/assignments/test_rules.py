"""The pure rules: the even spread (round robin in the order given) and the annotator's next pass."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.assignments.rules import NextStep, next_step, spread_evenly


def test_seven_problems_over_three_users_are_three_two_two_in_order():
    problems = [f"p{n}" for n in range(1, 8)]
    pairs = spread_evenly(problems, ["ann_a", "ann_b", "ann_c"])
    assert pairs == [
        ("p1", "ann_a"),
        ("p2", "ann_b"),
        ("p3", "ann_c"),
        ("p4", "ann_a"),
        ("p5", "ann_b"),
        ("p6", "ann_c"),
        ("p7", "ann_a"),
    ]
    assert Counter(user for _, user in pairs) == {"ann_a": 3, "ann_b": 2, "ann_c": 2}


def test_one_user_takes_everything_and_fewer_problems_than_users_leave_the_last_users_without():
    assert spread_evenly(["p1", "p2"], ["solo"]) == [("p1", "solo"), ("p2", "solo")]
    assert spread_evenly(["p1", "p2"], ["a", "b", "c"]) == [("p1", "a"), ("p2", "b")]
    assert spread_evenly([], ["a"]) == []


def test_no_assignee_is_an_error():
    with pytest.raises(ValueError, match="at least one assignee"):
        spread_evenly(["p1"], [])


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ({}, NextStep(1, "Pass 1: start")),
        ({1: "draft"}, NextStep(1, "Pass 1: continue")),
        ({1: "submitted"}, NextStep(2, "Pass 2: start")),
        ({1: "approved", 2: "rejected", 3: "draft"}, NextStep(2, "Pass 2: fix")),
        (
            {1: "approved", 2: "approved", 3: "submitted", 4: "stale"},
            NextStep(None, "Waiting for source review"),
        ),
        ({1: "approved", 2: "approved", 3: "approved", 4: "approved"}, NextStep(5, "Pass 5: start")),
        (
            {1: "approved", 2: "approved", 3: "approved", 4: "approved", 5: "rejected"},
            NextStep(5, "Pass 5: fix"),
        ),
        (
            {1: "approved", 2: "approved", 3: "approved", 4: "approved", 5: "submitted"},
            NextStep(None, "Pass 5 waiting for source review"),
        ),
        (
            {1: "approved", 2: "approved", 3: "approved", 4: "approved", 5: "approved"},
            NextStep(None, "Done", True),
        ),
    ],
)
def test_the_next_pass_is_the_lowest_one_that_is_the_annotators_work(states, expected):
    assert next_step(states) == expected
