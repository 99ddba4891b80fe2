"""SolveAcc's 95% interval (issue 28 item 12): the probe metrics' parent-cluster percentile bootstrap, computed
here by hand from ``random.Random(seed).choice`` over the sorted parents and the Kit's linear percentile."""

from __future__ import annotations

import math
import random

import pytest

from evaluation import metrics
from kit.bootstrap import multiplicities, percentile
from solving.scoring import solve_acc


def _by_hand(credits: dict[str, float], resamples: int, seed: int) -> list[float]:
    parents = sorted(credits)
    rng = random.Random(seed)
    reps = sorted(sum(credits[rng.choice(parents)] for _ in parents) / len(parents) for _ in range(resamples))

    def at(p: float) -> float:
        position = (len(reps) - 1) * p
        left = math.floor(position)
        right = min(left + 1, len(reps) - 1)
        return reps[left] + (position - left) * (reps[right] - reps[left])

    return [at(0.025), at(0.975)]


def test_solve_acc_ci_is_the_parent_cluster_bootstrap_computed_by_hand():
    credits = {"P3": 0.5, "P1": 1.0, "P2": 0.0}  # sorted: P1, P2, P3
    stat = solve_acc(credits, seed=2027, resamples=5)
    # seed 2027 draws (P1 P2 P1) (P1 P3 P2) (P2 P3 P1) (P2 P1 P2) (P3 P1 P2): means 2/3, 1/2, 1/2, 1/3, 1/2;
    # sorted [1/3, 1/2, 1/2, 1/2, 2/3]; 2.5%: position 0.1 → 1/3 + 0.1·(1/6) = 0.35; 97.5%: 3.9 → 1/2 + 0.9·(1/6)
    assert stat.value == 0.5 and stat.parents == 3 and stat.missing == 0
    assert stat.ci == pytest.approx([0.35, 0.65], abs=1e-12)
    assert stat.ci == _by_hand(credits, 5, 2027)
    assert solve_acc(credits, seed=2027).ci == pytest.approx(_by_hand(credits, 2000, 2027), abs=1e-12)


def test_solve_acc_without_a_seed_or_with_a_missing_parent_has_no_interval():
    assert solve_acc({"P1": 1.0, "P2": 0.0}).ci is None
    missing = solve_acc({"P1": 1.0, "P2": None}, seed=2027)
    assert (missing.value, missing.lower, missing.upper, missing.ci) == (None, 0.5, 1.0, None)
    assert solve_acc({}, seed=2027).ci is None


def test_the_eval_metrics_and_solve_acc_share_one_bootstrap():
    # evaluation.metrics draws its parent clusters with the same primitives (no second copy to drift)
    assert metrics.multiplicities is multiplicities
    counts = multiplicities(3, 5, 2027)
    assert counts.tolist() == [[2, 1, 0], [1, 1, 1], [1, 1, 1], [1, 2, 0], [1, 1, 1]]
    assert percentile(counts[:, 0].copy(), 0.5) == 1.0
