"""The Kit's parent-cluster bootstrap primitives (Kit §5.7, ``physalign/bootstrap.py``). Pure numpy.

The evaluation metrics (``evaluation.metrics``) and SolveAcc (``solving.scoring``) draw their intervals the
same way: ``resamples`` replicates, each drawing ``len(clusters)`` parents with ``rng.choice`` from a fresh
``random.Random(seed)`` over the sorted parents; a replicate's statistic weights each parent by its
multiplicity; the 95% interval is the 2.5 / 97.5 percentiles with linear interpolation at ``(n − 1)·p``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

CONFIDENCE = 0.95


def percentile(ordered: np.ndarray, probability: float) -> float:
    """The ``probability`` percentile of sorted replicates, interpolated linearly at ``(n − 1)·p``."""
    # Not numpy.quantile(method="linear"): it places the same point but, for a fractional part >= 0.5,
    # interpolates from the upper neighbour (b - (b - a)(1 - t)), which differs from the Kit's a + t(b - a)
    # (physalign/bootstrap.py _percentile) in the last bit on some inputs, e.g. the lower tail at 2,000
    # resamples (t = 0.975). Keeping the Kit's arithmetic keeps our intervals bit-identical to its reports.
    position = (len(ordered) - 1) * probability
    left = math.floor(position)
    right = min(left + 1, len(ordered) - 1)
    return float(ordered[left] + (position - left) * (ordered[right] - ordered[left]))


def multiplicities(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """The (resamples × n_clusters) matrix of draw counts, identical to
    ``Counter(rng.choice(clusters) for _ in clusters)`` repeated ``resamples`` times."""
    rng = random.Random(seed)
    k = n_clusters.bit_length()
    needed = resamples * n_clusters
    accepted: list[np.ndarray] = []
    have = 0
    while have < needed:
        words = int((needed - have) * (1 << k) / n_clusters * 1.02) + 64
        stream = np.frombuffer(rng.getrandbits(32 * words).to_bytes(4 * words, "little"), dtype="<u4")
        draws = stream >> np.uint32(32 - k)
        draws = draws[draws < n_clusters]
        accepted.append(draws)
        have += draws.size
    indices = np.concatenate(accepted)[:needed].astype(np.int64)
    flat = np.repeat(np.arange(resamples, dtype=np.int64), n_clusters) * n_clusters + indices
    return np.bincount(flat, minlength=needed).reshape(resamples, n_clusters).astype(np.float64)


def interval(reps: np.ndarray, confidence: float = CONFIDENCE) -> list[float] | None:
    """The percentile interval of replicates; None when there are fewer than two or one is undefined."""
    if reps.size < 2 or not np.all(np.isfinite(reps)):
        return None
    ordered = np.sort(reps)
    tail = (1 - confidence) / 2
    return [percentile(ordered, tail), percentile(ordered, 1 - tail)]


def equal_parent_mean_interval(values: Sequence[float], *, resamples: int, seed: int) -> list[float] | None:
    """The 95% parent-cluster interval of an equal-parent mean (one value per parent, in sorted parent order):
    each replicate is ``Σ multiplicity_i · value_i / N``. None for no parents or fewer than two resamples."""
    if not values or resamples < 2:
        return None
    column = np.asarray(values, dtype=np.float64)
    reps = multiplicities(len(column), resamples, seed) @ column / len(column)
    return interval(reps)
