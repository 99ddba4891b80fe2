"""Agreement statistics against hand-computed and textbook values."""

from __future__ import annotations

import pytest

from review.agreement import cohen_kappa, fleiss_kappa, pairwise_kappas, per_item_agreement


def test_cohen_textbook_two_by_two():
    # Wikipedia "Cohen's kappa" example: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.7; A says yes 25/50, B 30/50 -> p_e = .5*.6 + .5*.4 = 0.5; kappa = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_second_textbook_example():
    # Wikipedia: yes/yes 45, yes/no 15, no/yes 25, no/no 15 -> p_o = .6, p_e = .6*.7 + .4*.3 = .54, kappa = .1304
    a = ["y"] * 60 + ["n"] * 40
    b = ["y"] * 45 + ["n"] * 15 + ["y"] * 25 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.06 / 0.46)


def test_cohen_edge_cases():
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None  # chance agreement 1: undefined
    assert cohen_kappa(["a", "b"], ["a", "b"]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])


FLEISS_TABLE = [  # Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories, kappa = 0.210
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _ratings_from_counts(table):
    ratings = {}
    for i, row in enumerate(FLEISS_TABLE if table is None else table):
        labels = [c for c, count in enumerate(row) for _ in range(count)]
        ratings[f"s{i}"] = {f"r{j}": label for j, label in enumerate(labels)}
    return ratings


def test_fleiss_textbook_example():
    ratings = _ratings_from_counts(None)
    # P-bar = 0.378, P_e = 0.2128 -> kappa = (0.378 - 0.2128) / (1 - 0.2128) = 0.20993
    assert fleiss_kappa(ratings) == pytest.approx(0.20993, abs=5e-5)
    per_item = per_item_agreement(ratings)
    assert per_item["s0"] == 1.0
    assert per_item["s1"] == pytest.approx((2 * 1 + 6 * 5 + 4 * 3 + 2 * 1) / (14 * 13))  # 0.253
    assert per_item["s5"] == pytest.approx((7 * 6 + 7 * 6) / (14 * 13))  # 0.462


def test_fleiss_two_raters_is_scotts_pi():
    # two raters, 4 items: (a,a), (a,b), (b,b), (b,b): p_o = 3/4; pooled a = 3/8, b = 5/8
    # p_e = 9/64 + 25/64 = 34/64; pi = (48/64 - 34/64) / (30/64) = 14/30
    ratings = {
        "1": {"x": "a", "y": "a"},
        "2": {"x": "a", "y": "b"},
        "3": {"x": "b", "y": "b"},
        "4": {"x": "b", "y": "b"},
    }
    assert fleiss_kappa(ratings) == pytest.approx(14 / 30)
    # Cohen differs from Scott: marginals x a=2/4, y a=1/4 -> p_e = .5*.25 + .5*.75 = .5 -> kappa = .5
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)


def test_fleiss_ignores_single_ratings_and_undefined_cases():
    assert fleiss_kappa({}) is None
    assert fleiss_kappa({"1": {"x": "a"}}) is None
    assert fleiss_kappa({"1": {"x": "a", "y": "a"}, "2": {"x": "a", "y": "a"}}) is None  # one category only
    with_single = {
        "1": {"x": "a", "y": "a"},
        "2": {"x": "a", "y": "b"},
        "3": {"x": "b", "y": "b"},
        "4": {"x": "b", "y": "b"},
        "5": {"z": "a"},
    }
    assert fleiss_kappa(with_single) == pytest.approx(14 / 30)


def test_pairwise_kappas_use_only_shared_items():
    ratings = {
        "1": {"ann": "a", "bob": "a", "cy": "a"},
        "2": {"ann": "b", "bob": "b"},
        "3": {"ann": "a", "bob": "b", "cy": "b"},
        "4": {"cy": "b"},
    }
    pairs = {(p.rater_a, p.rater_b): p for p in pairwise_kappas(ratings)}
    assert set(pairs) == {("ann", "bob"), ("ann", "cy"), ("bob", "cy")}
    ab = pairs[("ann", "bob")]
    # items 1,2,3: ann a,b,a; bob a,b,b -> p_o = 2/3; p_e = (2*1 + 1*2)/9 = 4/9; kappa = (2/9)/(5/9) = 0.4
    assert (ab.items, ab.observed) == (3, pytest.approx(2 / 3)) and ab.kappa == pytest.approx(0.4)
    bc = pairs[("bob", "cy")]  # items 1,3: identical -> kappa 1
    assert (bc.items, bc.observed, bc.kappa) == (2, 1.0, pytest.approx(1.0))
    ac = pairs[("ann", "cy")]  # items 1,3: ann a,a; cy a,b -> p_o = .5, p_e = (2*1)/4 = .5 -> kappa 0
    assert ac.kappa == pytest.approx(0.0)
    assert per_item_agreement(ratings) == {"1": 1.0, "2": 1.0, "3": pytest.approx(1 / 3)}
