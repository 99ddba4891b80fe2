"""Aggregate metrics with parent-cluster bootstrap intervals (Kit §5.5, §5.7; paper §4, App. B–D). Pure numpy.

Input is the item-file contract (one dict per scored request; see ``ITEM_FIELDS``). Every statistic is
``Agg_S``: within a parent the mean over that type's probes, across parents the equal-weight mean,
across types (``task_id``: T02, T03 — T03-image and T03-text are one type) equal frozen weights over
the types present in S. Weights are fixed by pool membership, never by which outputs came back:
``infra_missing`` items stay in the denominator, the point value is then null and ``lower``/``upper``
fill the missing items with 0/1.

Bootstrap: clusters = sorted distinct parent ids of the whole file; ``random.Random(seed)``; each
replicate draws ``len(clusters)`` clusters with ``rng.choice``; a parent's multiplicity weights its
parent-mean in every statistic of every model and condition. The draws are reproduced exactly from
the Mersenne Twister word stream (``rng.choice`` = rejection sampling on ``getrandbits(k)``) so that
all replicates are one multiplicity matrix and every statistic is one matrix product.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

CONDITIONS = ("raw", "gold", "no_image", "reordered")
STATUSES = ("completed", "unparseable", "refusal", "truncated", "infra_missing")
NEAREST = ("correct", "wrong", "not_applicable")
ITEM_FIELDS = ("model", "condition", "probe_id", "parent_id", "task_id", "interface", "pools", "status", "C", "G",
               "K", "gold_alias_count", "nearest")
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 2027
CONFIDENCE = 0.95


class ItemFileError(ValueError):
    pass


# ----------------------------------------------------------------------------------------------- loading

def read_items(path: str) -> list[dict[str, Any]]:
    items = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ItemFileError(f"line {number}: not JSON ({exc.msg})") from exc
    return items


def _validate(items: Sequence[dict[str, Any]]) -> None:
    seen: set[tuple[str, str, str]] = set()
    for number, item in enumerate(items, 1):
        missing = [f for f in ITEM_FIELDS if f not in item]
        if missing:
            raise ItemFileError(f"item {number}: missing fields {missing}")
        if item["condition"] not in CONDITIONS:
            raise ItemFileError(f"item {number}: unknown condition {item['condition']!r}")
        if item["status"] not in STATUSES:
            raise ItemFileError(f"item {number}: unknown status {item['status']!r}")
        if item["nearest"] not in NEAREST:
            raise ItemFileError(f"item {number}: unknown nearest outcome {item['nearest']!r}")
        if item["status"] == "infra_missing":
            if item["G"] is not None or item["C"] is not None:
                raise ItemFileError(f"item {number}: infra_missing items carry null C and G")
        elif item["G"] not in (0, 1) or item["C"] not in (0, 1, None):
            raise ItemFileError(f"item {number}: C must be 0/1/null and G 0/1")
        if not isinstance(item["K"], int) or item["K"] < 1 or not 0 <= item["gold_alias_count"] <= item["K"]:
            raise ItemFileError(f"item {number}: K and gold_alias_count are inconsistent")
        ident = (item["model"], item["condition"], item["probe_id"])
        if ident in seen:
            raise ItemFileError(f"item {number}: duplicate (model, condition, probe) {ident}")
        seen.add(ident)


# ----------------------------------------------------------------------------------------------- engine

@dataclass
class _Agg:
    """One Agg_S: per type, a column of parent means (missing as 0) and a column of parent presence."""

    columns: list[tuple[int, int]]
    lo: float | None
    hi: float | None
    missing: bool
    parents: int
    probes: int

    @property
    def value(self) -> float | None:
        return None if self.missing else self.lo


@dataclass
class Stat:
    value: float | None
    lower: float | None
    upper: float | None
    parents: int
    probes: int
    reps: np.ndarray | None  # bootstrap replicates (only when value is defined)

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": _interval(self.reps) if self.value is not None else None,
                "lower": self.lower, "upper": self.upper, "parents": self.parents, "probes": self.probes}


def _interval(reps: np.ndarray | None) -> list[float] | None:
    if reps is None or reps.size < 2 or not np.all(np.isfinite(reps)):
        return None  # withheld_undefined_statistic
    ordered = np.sort(reps)
    tail = (1 - CONFIDENCE) / 2
    return [_percentile(ordered, tail), _percentile(ordered, 1 - tail)]


def _percentile(ordered: np.ndarray, probability: float) -> float:
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


class _Engine:
    def __init__(self, n_parents: int, n_types: int) -> None:
        self.n_parents = n_parents
        self.n_types = n_types
        self._columns: list[np.ndarray] = []
        self._dedup: dict[bytes, int] = {}
        self._replicates: np.ndarray | None = None

    def _column(self, vector: np.ndarray) -> int:
        digest = vector.tobytes()
        index = self._dedup.get(digest)
        if index is None:
            index = len(self._columns)
            self._columns.append(vector)
            self._dedup[digest] = index
        return index

    def agg(self, parent: np.ndarray, kind: np.ndarray, values: np.ndarray, probes: int | None = None) -> _Agg:
        """Agg over the given items; ``values`` holds NaN for infrastructure-missing items."""
        missing = np.isnan(values)
        low, high = np.where(missing, 0.0, values), np.where(missing, 1.0, values)
        columns, lo_parts, hi_parts = [], [], []
        present_any = np.zeros(self.n_parents, dtype=bool)
        for t in range(self.n_types):
            mask = kind == t
            if not mask.any():
                continue
            count = np.bincount(parent[mask], minlength=self.n_parents).astype(np.float64)
            present = count > 0
            present_any |= present
            safe = np.where(present, count, 1.0)
            mean_lo = np.bincount(parent[mask], weights=low[mask], minlength=self.n_parents) / safe
            mean_hi = np.bincount(parent[mask], weights=high[mask], minlength=self.n_parents) / safe
            n_t = float(present.sum())
            lo_parts.append(mean_lo.sum() / n_t)
            hi_parts.append(mean_hi.sum() / n_t)
            columns.append((self._column(mean_lo), self._column(present.astype(np.float64))))
        if not columns:
            return _Agg([], None, None, False, 0, 0)
        return _Agg(columns, float(np.mean(lo_parts)), float(np.mean(hi_parts)), bool(missing.any()),
                    int(present_any.sum()), int(probes if probes is not None else values.size))

    def run(self, weights: np.ndarray) -> None:
        if self._columns:
            self._replicates = weights @ np.column_stack(self._columns)

    def reps(self, agg: _Agg) -> np.ndarray | None:
        if self._replicates is None or not agg.columns:
            return None
        y = self._replicates
        with np.errstate(divide="ignore", invalid="ignore"):
            parts = [np.where(y[:, d] > 0, y[:, n] / np.where(y[:, d] > 0, y[:, d], 1.0), np.nan)
                     for n, d in agg.columns]
        return np.mean(parts, axis=0)


# ----------------------------------------------------------------------------------------------- statistics

def _simple(engine: _Engine, agg: _Agg) -> Stat:
    return Stat(agg.value, agg.lo, agg.hi, agg.parents, agg.probes, engine.reps(agg) if agg.value is not None else None)


def _difference(a: Stat, b: Stat) -> Stat:
    value = None if a.value is None or b.value is None else a.value - b.value
    lower = None if a.lower is None or b.upper is None else a.lower - b.upper
    upper = None if a.upper is None or b.lower is None else a.upper - b.lower
    reps = a.reps - b.reps if value is not None and a.reps is not None and b.reps is not None else None
    support = a if a.probes >= b.probes else b
    return Stat(value, lower, upper, support.parents, support.probes, reps)


def _ratio(a: Stat, b: Stat) -> Stat:
    """a / b where a ≤ b item-wise (a conditional rate); null when b is 0."""
    value = None if a.value is None or b.value is None or b.value == 0 else a.value / b.value
    lower = None if a.lower is None or not b.upper else a.lower / b.upper
    upper = None if a.upper is None or not b.lower else min(1.0, a.upper / b.lower)
    reps = None
    if value is not None and a.reps is not None and b.reps is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            reps = np.where(b.reps != 0, a.reps / np.where(b.reps != 0, b.reps, 1.0), np.nan)
    return Stat(value, lower, upper, b.parents, b.probes, reps)


def _complement(a: Stat) -> Stat:
    return Stat(None if a.value is None else 1 - a.value, None if a.upper is None else 1 - a.upper,
                None if a.lower is None else 1 - a.lower, a.parents, a.probes, None if a.reps is None else 1 - a.reps)


@dataclass
class _Items:
    model: np.ndarray
    condition: np.ndarray
    probe: np.ndarray
    parent: np.ndarray
    kind: np.ndarray
    in_b: np.ndarray
    in_l: np.ndarray
    in_p: np.ndarray
    returned: np.ndarray
    C: np.ndarray  # NaN where null
    G: np.ndarray  # NaN where null
    chance: np.ndarray
    nearest: np.ndarray  # 0 correct, 1 wrong, 2 not applicable


def _arrays(items: Sequence[dict[str, Any]], models: list[str], parents: list[str], types: list[str],
            probes: list[str]) -> _Items:
    model_ix = {m: i for i, m in enumerate(models)}
    parent_ix = {p: i for i, p in enumerate(parents)}
    type_ix = {t: i for i, t in enumerate(types)}
    probe_ix = {p: i for i, p in enumerate(probes)}
    cond_ix = {c: i for i, c in enumerate(CONDITIONS)}
    near_ix = {n: i for i, n in enumerate(NEAREST)}
    nan = float("nan")

    def column(f: Any, dtype: Any) -> np.ndarray:
        return np.fromiter((f(it) for it in items), dtype=dtype, count=len(items))

    return _Items(
        model=column(lambda it: model_ix[it["model"]], np.int64),
        condition=column(lambda it: cond_ix[it["condition"]], np.int64),
        probe=column(lambda it: probe_ix[it["probe_id"]], np.int64),
        parent=column(lambda it: parent_ix[it["parent_id"]], np.int64),
        kind=column(lambda it: type_ix[it["task_id"]], np.int64),
        in_b=column(lambda it: "B" in it["pools"], bool),
        in_l=column(lambda it: "L" in it["pools"], bool),
        in_p=column(lambda it: "P" in it["pools"], bool),
        returned=column(lambda it: it["status"] != "infra_missing", bool),
        C=column(lambda it: nan if it["C"] is None else float(it["C"]), np.float64),
        G=column(lambda it: nan if it["G"] is None else float(it["G"]), np.float64),
        chance=column(lambda it: it["gold_alias_count"] / it["K"], np.float64),
        nearest=column(lambda it: near_ix[it["nearest"]], np.int64),
    )


def compute_metrics(items: Sequence[dict[str, Any]], *, resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Everything of the item-file contract. Fractions in [0, 1]."""
    items = list(items)
    _validate(items)
    if resamples < 2:
        raise ItemFileError("at least two bootstrap resamples are required")
    models = sorted({it["model"] for it in items})
    parents = sorted({it["parent_id"] for it in items})
    types = sorted({it["task_id"] for it in items})
    probes = sorted({it["probe_id"] for it in items})
    a = _arrays(items, models, parents, types, probes)
    engine = _Engine(len(parents), len(types))
    plan: dict[str, Any] = {}

    def agg(mask: np.ndarray, values: np.ndarray) -> _Agg:
        return engine.agg(a.parent[mask], a.kind[mask], values[mask], probes=int(np.unique(a.probe[mask]).size))

    # probe-level baselines over distinct probes (first occurrence of each probe)
    _, first = np.unique(a.probe, return_index=True)
    unique = np.zeros(len(items), dtype=bool)
    unique[first] = True
    correct_nearest = (a.nearest == 0).astype(np.float64)
    plan["baselines"] = {"random": agg(unique & a.in_b, a.chance),
                         "nearest": agg(unique & (a.nearest != 2), correct_nearest)}

    for m_index, model in enumerate(models):
        mine = a.model == m_index
        raw = mine & (a.condition == 0)
        C, G = a.C, a.G
        J = C * G
        p: dict[str, Any] = {
            "GAcc": agg(raw & a.in_b, G), "CAcc": agg(raw & a.in_l, C), "JAcc": agg(raw & a.in_l, J),
            "GAcc_L": agg(raw & a.in_l, G),
            "q10": agg(raw & a.in_l, C * (1 - G)), "q01": agg(raw & a.in_l, (1 - C) * G),
            "q00": agg(raw & a.in_l, (1 - C) * (1 - G)),
        }
        # paired set P_m: probes of L∩P whose raw and gold responses were both returned
        gold = mine & (a.condition == 1)
        raw_ok = np.zeros(len(probes), dtype=bool)
        gold_ok = np.zeros(len(probes), dtype=bool)
        raw_ok[a.probe[raw & a.returned & a.in_l & a.in_p]] = True
        gold_ok[a.probe[gold & a.returned & a.in_l & a.in_p]] = True
        paired_probe = raw_ok & gold_ok
        paired_raw = raw & paired_probe[a.probe]
        paired_gold = gold & paired_probe[a.probe]
        gold_of_probe = np.full(len(probes), np.nan)
        gold_of_probe[a.probe[paired_gold]] = a.G[paired_gold]
        g_gold = gold_of_probe[a.probe]
        p["base"] = agg(paired_raw, G)
        p["gt"] = agg(paired_gold, G)
        for x in (0, 1):
            for y in (0, 1):
                p[f"T{x}{y}"] = agg(paired_raw, ((G == x) & (g_gold == y)).astype(np.float64))
        p["raw_zero"] = agg(paired_raw, 1 - G)
        p["raw_one"] = agg(paired_raw, G)
        for cond_index, cond in ((2, "no_image"), (3, "reordered")):
            p[cond] = agg(mine & (a.condition == cond_index) & a.in_b, G)
        h = raw & (a.nearest != 2)
        hard = raw & (a.nearest == 1)
        p["H_model"] = agg(h, G)
        p["H_nearest"] = agg(h, correct_nearest)
        p["H_random"] = agg(h, a.chance)
        p["Hh_model"] = agg(hard, G)
        p["Hh_random"] = agg(hard, a.chance)
        p["Hh_CpGm"] = agg(hard & a.in_l, C * (1 - G))
        p["Hh_C"] = agg(hard & a.in_l, C)
        plan[model] = p

    weights = multiplicities(len(parents), resamples, seed)
    engine.run(weights)

    def s(x: _Agg) -> Stat:
        return _simple(engine, x)

    out_models: dict[str, Any] = {}
    for model in models:
        p = plan[model]
        gacc, cacc, jacc = s(p["GAcc"]), s(p["CAcc"]), s(p["JAcc"])
        given = _ratio(jacc, cacc)
        base, gt = s(p["base"]), s(p["gt"])
        no_image, reordered = s(p["no_image"]), s(p["reordered"])
        h_model, h_near, h_rand = s(p["H_model"]), s(p["H_nearest"]), s(p["H_random"])
        hh_model, hh_rand = s(p["Hh_model"]), s(p["Hh_random"])
        cpgm = s(p["Hh_CpGm"])
        stats = {
            "GAcc": gacc, "CAcc": cacc, "JAcc": jacc, "GAcc_L": s(p["GAcc_L"]),
            "GAcc_given_C": given, "GErr_given_C": _complement(given),
            "quadrants": {"q11": jacc, "q10": s(p["q10"]), "q01": s(p["q01"]), "q00": s(p["q00"])},
            "paired": {"base": base, "gt": gt, "delta": _difference(gt, base),
                       "repair_share": s(p["T01"]), "harm_share": s(p["T10"]),
                       "repair_rate": _ratio(s(p["T01"]), s(p["raw_zero"])),
                       "harm_rate": _ratio(s(p["T10"]), s(p["raw_one"]))},
            "no_image": {"GAcc": no_image, "delta": _difference(no_image, gacc)},
            "reordered": {"GAcc": reordered, "delta": _difference(reordered, gacc)},
            "H": {"model": h_model, "nearest": h_near, "random": h_rand,
                  "model_minus_nearest": _difference(h_model, h_near)},
            "H_hard": {"model": hh_model, "random": hh_rand, "model_minus_random": _difference(hh_model, hh_rand),
                       "CpGm_share": cpgm, "GErr_given_C": _ratio(cpgm, s(p["Hh_C"]))},
        }
        out_models[model] = _render(stats)
    baselines = {name: s(x).as_dict() for name, x in plan["baselines"].items()}
    return {"models": out_models, "baselines": baselines,
            "bootstrap": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE,
                          "clusters": len(parents), "method": "parent_cluster_percentile_linear_interpolation"}}


def _render(value: Any) -> Any:
    if isinstance(value, Stat):
        return value.as_dict()
    return {k: _render(v) for k, v in value.items()}


def iter_statistics(result: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(model or "baseline", dotted metric name, statistic) for every statistic of a result."""
    def walk(prefix: str, node: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
        if "value" in node and "ci" in node:
            yield prefix, node
            return
        for key, child in node.items():
            yield from walk(f"{prefix}.{key}" if prefix else key, child)

    for model, node in result["models"].items():
        for name, stat in walk("", node):
            yield model, name, stat
    for name, stat in result["baselines"].items():
        yield "baseline", name, stat


def undefined_reason(stat: dict[str, Any]) -> str:
    if stat["value"] is None:
        return "infra_missing" if stat["lower"] is not None else "undefined"
    if stat["ci"] is None:
        return "ci_withheld_undefined_statistic"
    return ""
