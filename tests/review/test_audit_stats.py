"""The hypergeometric bound, the finite-risk rule and seeded sampling (Kit §7 Path B)."""

from __future__ import annotations

import itertools

import pytest

from review.audit_stats import Finding, assess, draw_sample, finite_risk, hypergeom_upper


def brute_force_upper(N: int, n: int, k: int) -> int:
    """Enumerate every sample of n from N with the first D items defective; keep D while at least 1/40 of
    the samples show ≤ k defects."""
    samples = list(itertools.combinations(range(N), n))
    return max(
        D for D in range(N + 1) if 40 * sum(sum(x < D for x in s) <= k for s in samples) >= len(samples)
    )


@pytest.mark.parametrize("N", range(1, 9))
def test_bound_matches_enumeration_for_small_populations(N):
    for n in range(N + 1):
        for k in range(n + 1):
            assert hypergeom_upper(N, n, k) == brute_force_upper(N, n, k), (N, n, k)


def test_published_kit_values():
    assert hypergeom_upper(521, 0, 0) == 521  # no sample, no information
    assert hypergeom_upper(521, 521, 9) == 9  # a census knows the count
    assert hypergeom_upper(0, 0, 0) == 0
    risk = finite_risk(531, 100, 1, 1)
    assert risk.upper_remaining_numerator == risk.upper_original - 1
    assert risk.remaining == 530 and risk.detected == 1
    census = finite_risk(10, 10, 2, 2)
    assert (census.upper_remaining_numerator, census.remaining, census.passes) == (0, 8, True)
    assert finite_risk(2, 2, 2, 2).passes is False  # nothing left to release


def test_bound_values_and_monotonicity():
    values = [hypergeom_upper(1099, 100, k) for k in range(6)]
    assert values == sorted(values)
    # zero defects in a sample of 100 from 1099 still allows a few dozen defective parents
    assert values[0] == 37
    assert finite_risk(1099, 100, 0, 0).passes is True  # 37 / 1099 ≤ 5 %
    assert finite_risk(1099, 100, 3, 0).passes is False
    assert finite_risk(100, 100, 0, 0).passes is True


@pytest.mark.parametrize("args", [(10, 11, 0), (5, 2, 3), (True, 0, 0), (4, -1, 0)])
def test_invalid_counts_are_refused(args):
    with pytest.raises(ValueError, match="INVALID_AUDIT_COUNTS"):
        hypergeom_upper(*args)


def test_removed_cannot_exceed_what_the_sample_allows():
    with pytest.raises(ValueError, match="REMOVED_DEFECTS_INCONSISTENT"):
        finite_risk(10, 10, 1, 2)


def _parents(count: int) -> dict[str, list[dict]]:
    return {
        f"P{i:03d}": [
            {
                "logical_probe_id": f"PAQ-{i:03d}-{j}",
                "interface": "T02-single" if j else "T03-image",
                "language": "en",
                "metadata": {
                    "selector": "s",
                    "packet_policy_id": "p",
                    "source_namespace": f"ns{i % 7}",
                    "representation_kind": "r",
                    "repair_applied_to_query": False,
                    "image_count": 1,
                },
            }
            for j in range(2)
        ]
        for i in range(count)
    }


def test_sampling_is_reproducible_from_the_nonce():
    parents = _parents(150)
    first = draw_sample(nonce="ab" * 32, round_number=1, parents=parents, development=["P000"])
    again = draw_sample(nonce="ab" * 32, round_number=1, parents=parents, development=["P000"])
    assert first == again
    assert len(first.sample) == 100 and len(first.secondary) == 25 and "P000" not in first.candidates
    assert set(first.secondary) <= set(first.sample) and not set(first.risk) & set(first.sample)
    other = draw_sample(nonce="cd" * 32, round_number=1, parents=parents, development=["P000"])
    assert other.sample != first.sample
    assert draw_sample(nonce="ab" * 32, round_number=2, parents=parents).sample != first.sample
    for pid, qid in first.blind_first.items():
        assert qid in {p["logical_probe_id"] for p in parents[pid]}


def test_small_population_is_a_census_and_risk_covers_tags():
    parents = _parents(12)
    plan = draw_sample(nonce="0f" * 32, round_number=1, parents=parents)
    assert plan.sample == sorted(parents) and plan.secondary == sorted(parents) and plan.risk == []
    assert plan.uncovered_risk_tags == []


def _assess(primary, secondary, resolutions=None, sample=("A", "B"), risk=()):
    probes = {"A": ["qa"], "B": ["qb"], "R": ["qr"]}
    return assess(
        candidates=["A", "B", "R"],
        sample=list(sample),
        secondary_parents=["A"],
        risk=list(risk),
        uncovered_risk_tags=[],
        blind_first={"A": "qa", "B": "qb", "R": "qr"},
        probes_by_parent=probes,
        primary=primary,
        secondary=secondary,
        resolutions=resolutions or {},
    )


OK = Finding("1", "approved", "none", 1)


def test_assessment_rules():
    census = _assess(
        {"qa": OK, "qb": OK}, {"qa": Finding("2", "approved", "none", 1)}, sample=("A", "B", "R")
    )
    assert census.blockers == ["PRIMARY_INCOMPLETE"]  # qr missing
    accepted = _assess(
        {"qa": OK, "qb": OK, "qr": OK}, {"qa": Finding("2", "approved", "none", 1)}, sample=("A", "B", "R")
    )
    assert accepted.accepted and accepted.retained_parents == ["A", "B", "R"]
    disputed = _assess({"qa": OK, "qb": OK}, {"qa": Finding("2", "rejected", "serious", 1)})
    assert "UNRESOLVED_DISAGREEMENTS" in disputed.blockers and disputed.escalated
    same = _assess({"qa": OK, "qb": OK}, {"qa": Finding("1", "approved", "none", 1)})
    assert "PROTOCOL_VIOLATION" in same.blockers
    resolved = _assess(
        {"qa": Finding("1", "rejected", "serious", 1), "qb": OK},
        {"qa": Finding("2", "approved", "none", 1), "qb": Finding("2", "approved", "none", 1)},
        {"qa": Finding("1", "rejected", "serious", 2)},
    )
    assert any(v.startswith("INDEPENDENT_ADJUDICATOR_REQUIRED") for v in resolved.violations)
    confirmed = _assess(
        {"qa": Finding("1", "rejected", "serious", 1), "qb": OK},
        {"qa": Finding("2", "rejected", "serious", 1), "qb": Finding("2", "approved", "none", 1)},
    )
    assert confirmed.confirmed_excluded_parents == ["A"] and confirmed.detected_sample_parents == ["A"]
    assert confirmed.risk.removed_confirmed == 1 and confirmed.risk.detected == 1
