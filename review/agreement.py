"""Inter-reviewer agreement: per-probe agreement, Cohen's κ per reviewer pair, Fleiss' κ. Pure: no Django.

Ratings are ``{item_id: {rater: label}}`` with hashable labels (a canonical blind answer, or
``"approved/none"``-style decisions). κ is ``None`` when it is undefined (no shared items, or chance
agreement of 1, i.e. every rating in one category).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations

Ratings = Mapping[str, Mapping[str, Hashable]]


@dataclass(frozen=True)
class PairKappa:
    rater_a: str
    rater_b: str
    items: int
    observed: float | None
    kappa: float | None


def cohen_kappa(labels_a: list[Hashable], labels_b: list[Hashable]) -> float | None:
    """Cohen's κ for two raters over the same items, in order."""
    if len(labels_a) != len(labels_b):
        raise ValueError("both raters must rate the same items")
    n = len(labels_a)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(labels_a, labels_b, strict=True)) / n
    counts_a, counts_b = Counter(labels_a), Counter(labels_b)
    expected = sum(counts_a[c] * counts_b[c] for c in counts_a) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def pairwise_kappas(ratings: Ratings) -> list[PairKappa]:
    """Cohen's κ for every pair of raters over the items both rated."""
    raters = sorted({rater for by_rater in ratings.values() for rater in by_rater})
    pairs = []
    for a, b in combinations(raters, 2):
        shared = sorted(item for item, by_rater in ratings.items() if a in by_rater and b in by_rater)
        if not shared:
            continue
        la = [ratings[item][a] for item in shared]
        lb = [ratings[item][b] for item in shared]
        observed = sum(x == y for x, y in zip(la, lb, strict=True)) / len(shared)
        pairs.append(PairKappa(a, b, len(shared), observed, cohen_kappa(la, lb)))
    return pairs


def fleiss_kappa(ratings: Ratings) -> float | None:
    """Fleiss' κ over items rated by at least two raters.

    With a varying number of raters per item the per-item agreement uses that item's own count
    (``Σ n_ij(n_ij−1) / n_i(n_i−1)``) and category shares are pooled over all ratings; with a constant
    count this is exactly Fleiss (1971).
    """
    items = [list(by_rater.values()) for by_rater in ratings.values() if len(by_rater) >= 2]
    if not items:
        return None
    per_item = []
    pooled: Counter[Hashable] = Counter()
    for labels in items:
        counts = Counter(labels)
        n = len(labels)
        per_item.append(sum(c * (c - 1) for c in counts.values()) / (n * (n - 1)))
        pooled.update(counts)
    total = sum(pooled.values())
    expected = sum((c / total) ** 2 for c in pooled.values())
    observed = sum(per_item) / len(per_item)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def per_item_agreement(ratings: Ratings) -> dict[str, float]:
    """Share of agreeing rater pairs for every item with at least two ratings."""
    result = {}
    for item, by_rater in ratings.items():
        labels = list(by_rater.values())
        if len(labels) < 2:
            continue
        pairs = list(combinations(labels, 2))
        result[item] = sum(a == b for a, b in pairs) / len(pairs)
    return result
