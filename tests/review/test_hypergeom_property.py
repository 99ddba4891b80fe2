"""The exact hypergeometric bound against scipy's hypergeometric CDF, on random populations (Kit §7 Path B).

``hypergeom_upper(N, n, k)`` is the largest D with ``P_D[X ≤ k] ≥ 1/40`` (X: defective parents in a simple
random sample of n from N, D of them defective). scipy evaluates the same CDF in floating point, so a draw
whose CDF comes within ``TIE`` of 1/40 for some D cannot be decided by scipy and is left out; the exact tie is
checked on its own below.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import hypergeom

from review.audit_stats import ALPHA_DENOMINATOR, ALPHA_NUMERATOR, hypergeom_upper

ALPHA = ALPHA_NUMERATOR / ALPHA_DENOMINATOR
TIE = 1e-9


@st.composite
def audits(draw: st.DrawFn, max_population: int = 1500) -> tuple[int, int, int]:
    population = draw(st.integers(1, max_population))
    # audit-sized samples with few defects (where the bound bites) as well as anything the counts allow
    sample = draw(st.integers(0, min(population, 125)) | st.integers(0, population))
    detected = draw(st.integers(0, min(sample, 10)) | st.integers(0, sample))
    return population, sample, detected


def scipy_tail(N: int, n: int, k: int) -> np.ndarray:
    """``P_D[X ≤ k]`` for every D in 0..N (scipy's order: population M, defective n, drawn N)."""
    return np.asarray(hypergeom.cdf(k, N, np.arange(N + 1), n), dtype=np.float64)


@settings(max_examples=300, deadline=None)
@given(audits())
def test_bound_is_the_largest_defect_count_scipy_finds_compatible(audit: tuple[int, int, int]) -> None:
    N, n, k = audit
    tail = scipy_tail(N, n, k)
    assume(not np.any(np.abs(tail - ALPHA) <= TIE))  # else scipy's rounding cannot tell the side of 1/40
    compatible = np.flatnonzero(tail >= ALPHA)
    assert hypergeom_upper(N, n, k) == int(compatible.max()), audit
    # the binary search relies on compatibility falling as D grows: scipy's compatible set is 0..upper
    assert compatible.tolist() == list(range(int(compatible.max()) + 1)), audit


@settings(max_examples=100, deadline=None)
@given(audits(max_population=300))
def test_bound_grows_with_detected_defects(audit: tuple[int, int, int]) -> None:
    N, n, k = audit
    upper = hypergeom_upper(N, n, k)
    assert k <= upper <= N
    if k < n:
        assert hypergeom_upper(N, n, k + 1) >= upper


def test_exact_tie_keeps_the_defect_count() -> None:
    # one draw from 40 with none defective: P_39[X ≤ 0] = 1/40 exactly, which the bound keeps (conservative)
    assert abs(float(hypergeom.cdf(0, 40, 39, 1)) - ALPHA) <= TIE
    assert hypergeom_upper(40, 1, 0) == 39
    assert hypergeom_upper(41, 1, 0) == 39  # P_40 = 1/41 < 1/40, P_39 = 2/41 ≥ 1/40
