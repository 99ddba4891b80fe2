"""Aggregate metrics with parent-cluster bootstrap intervals (Kit §5.5, §5.7; paper §4, App. B–D). Pure numpy.

Input is the item-file contract (one dict per scored request; see ``ITEM_FIELDS``). Every statistic is
``Agg_S``: within a parent the mean over that type's probes, across parents the equal-weight mean,
across types (``task_id``: T02, T03 — T03-image and T03-text are one type) equal frozen weights over
the types present in S. Weights are fixed by pool membership, never by which outputs came back:
``infra_missing`` items stay in the denominator, the point value is then null and ``lower``/``upper``
fill the missing items with 0/1.

Bootstrap (Kit §5.7, ``paired_cluster_bootstrap`` as its reports call it): every statistic is resampled
over the parents of its OWN scope, not over every parent of the file. A scope's clusters are the sorted
distinct parent ids of its items (infrastructure-missing ones included); each replicate draws
``len(clusters)`` of them with ``rng.choice`` from a fresh ``random.Random(seed)``, and a parent's
multiplicity weights its parent-mean in every statistic of the scope, so raw and +GT (and the two sides
of a difference or ratio) share one count map; two models whose scopes have the same parents get the
same draws. Percentiles interpolate linearly at ``(n − 1)·p``; one undefined replicate (a type or a
conditional denominator lost) withholds the interval (``ci`` null), as does a null point value. The
scopes, per model: ``full`` (the Kit's ``raw_all`` report: every raw probe — GAcc, CAcc, JAcc, GAcc_L,
GAcc|C, quadrants), ``P`` (the Kit's paired report ``kit_paired``: every probe of pool P, a missing or
absent response giving bounds, delta bounds ``[lo_gold − hi_raw, hi_gold − lo_raw]``; the Kit's BAcc,
BAcc_gold, delta_BAcc_gold_raw are our GAcc, GAcc_gold, delta; null for a model with no +GT response),
``P_m`` (the paper's paired set of Tables 11–12), ``no_image`` /
``reordered`` (the control and its raw reference on B), ``H``, ``H_hard``; the baselines have one scope
each. Each statistic reports ``clusters``, the size of its scope. The draws are reproduced exactly from
the Mersenne Twister word stream (``rng.choice`` = rejection sampling on ``getrandbits(k)``), so a
scope's replicates are one multiplicity matrix and its statistics one matrix product.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from kit.bootstrap import multiplicities
from kit.bootstrap import percentile as _percentile

CONDITIONS = ("raw", "gold", "no_image", "reordered")
STATUSES = ("completed", "unparseable", "refusal", "truncated", "infra_missing")
NEAREST = ("correct", "wrong", "not_applicable")
ITEM_FIELDS = (
    "model",
    "condition",
    "probe_id",
    "parent_id",
    "task_id",
    "interface",
    "pools",
    "status",
    "C",
    "G",
    "K",
    "gold_alias_count",
    "nearest",
)
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 2027
CONFIDENCE = 0.95


class ItemFileError(ValueError):
    pass


# ----------------------------------------------------------------------------------------------- loading


def read_items(path: str) -> list[dict[str, Any]]:
    """One record per non-blank line. orjson parses each line (≈ 5× faster than ``json``: 76k items
    in ~0.15 s); a line orjson refuses is read again exactly as before (decoded as
    UTF-8, skipped when blank, ``json.loads``), so what ``json`` accepts beyond strict JSON (NaN, big
    integers, lone surrogates) and every error message stay as they were. ``bytes.splitlines`` splits
    at ``\n``, ``\r`` and ``\r\n`` only, like text-mode iteration with universal newlines."""
    with open(path, "rb") as handle:
        data = handle.read()
    items = []
    loads = orjson.loads
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():  # ASCII whitespace only; other Unicode blanks go through the fallback
            continue
        try:
            items.append(loads(raw))
            continue
        except orjson.JSONDecodeError:
            pass
        line = raw.decode("utf-8")
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ItemFileError(f"line {number}: not JSON ({exc.msg})") from exc
    return items


def _validate_item(number: int, item: dict[str, Any]) -> None:
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


class ItemColumns:
    """The item records as numpy columns, built one record at a time, each validated as it arrives.

    Nothing keeps the records themselves: a run's items can stream from the database (or a file) through
    here, and memory holds about a hundred bytes per item (codes, flags and floats in compact arrays)
    instead of each record's dict. Strings are coded by first appearance, then renumbered in sorted order
    by ``finish``, which gives exactly the columns (and sorted name lists) of sorting the distinct values
    of a list of the records."""

    _CODED = ("model", "parent_id", "task_id", "probe_id")

    def __init__(self) -> None:
        self.count = 0
        self._codes: dict[str, dict[Any, int]] = {f: {} for f in self._CODED}
        self._ints = {
            name: array("q") for name in ("model", "condition", "probe", "parent", "kind", "nearest")
        }
        self._flags = {name: array("b") for name in ("in_b", "in_l", "in_p", "returned")}
        self._floats = {name: array("d") for name in ("C", "G", "chance")}
        self._seen: set[tuple[int, int, int]] = set()

    def _code(self, field: str, value: Any) -> int:
        codes = self._codes[field]
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(codes)
        return code

    def add(self, item: dict[str, Any]) -> None:
        self.count += 1
        _validate_item(self.count, item)
        model, probe = self._code("model", item["model"]), self._code("probe_id", item["probe_id"])
        condition = CONDITIONS.index(item["condition"])
        if (model, condition, probe) in self._seen:
            ident = (item["model"], item["condition"], item["probe_id"])
            raise ItemFileError(f"item {self.count}: duplicate (model, condition, probe) {ident}")
        self._seen.add((model, condition, probe))
        ints, flags, floats = self._ints, self._flags, self._floats
        ints["model"].append(model)
        ints["condition"].append(condition)
        ints["probe"].append(probe)
        ints["parent"].append(self._code("parent_id", item["parent_id"]))
        ints["kind"].append(self._code("task_id", item["task_id"]))
        ints["nearest"].append(NEAREST.index(item["nearest"]))
        pools = item["pools"]
        flags["in_b"].append("B" in pools)
        flags["in_l"].append("L" in pools)
        flags["in_p"].append("P" in pools)
        flags["returned"].append(item["status"] != "infra_missing")
        floats["C"].append(math.nan if item["C"] is None else float(item["C"]))
        floats["G"].append(math.nan if item["G"] is None else float(item["G"]))
        floats["chance"].append(item["gold_alias_count"] / item["K"])

    def finish(self) -> tuple[_Items, dict[str, list[Any]]]:
        """The columns, and per coded field its distinct values in sorted order (codes index these)."""
        names: dict[str, list[Any]] = {}
        ranks: dict[str, np.ndarray] = {}
        for field, codes in self._codes.items():
            ordered = sorted(codes)
            rank = np.empty(len(codes), dtype=np.int64)
            rank[[codes[value] for value in ordered]] = np.arange(len(ordered), dtype=np.int64)
            names[field], ranks[field] = ordered, rank

        def ints(name: str, field: str | None = None) -> np.ndarray:
            column = np.frombuffer(self._ints[name], dtype=np.int64) if self.count else np.zeros(0, np.int64)
            return ranks[field][column] if field else column.copy()

        def flags(name: str) -> np.ndarray:
            return (
                np.frombuffer(self._flags[name], dtype=np.int8).astype(bool)
                if self.count
                else np.zeros(0, bool)
            )

        def floats(name: str) -> np.ndarray:
            return np.frombuffer(self._floats[name], dtype=np.float64).copy() if self.count else np.zeros(0)

        columns = _Items(
            model=ints("model", "model"),
            condition=ints("condition"),
            probe=ints("probe", "probe_id"),
            parent=ints("parent", "parent_id"),
            kind=ints("kind", "task_id"),
            in_b=flags("in_b"),
            in_l=flags("in_l"),
            in_p=flags("in_p"),
            returned=flags("returned"),
            C=floats("C"),
            G=floats("G"),
            chance=floats("chance"),
            nearest=ints("nearest"),
        )
        return columns, names


# ----------------------------------------------------------------------------------------------- engine


@dataclass
class _Agg:
    """One Agg_S: per type, a column of parent means (missing as 0) and a column of parent presence,
    all in one bootstrap scope."""

    scope: str
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
    scope: str = ""
    clusters: int = 0  # parents resampled for this statistic (its scope), 0 without a scope

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci": _interval(self.reps) if self.value is not None else None,
            "lower": self.lower,
            "upper": self.upper,
            "parents": self.parents,
            "probes": self.probes,
            "clusters": self.clusters,
        }


def _interval(reps: np.ndarray | None) -> list[float] | None:
    if reps is None or reps.size < 2 or not np.all(np.isfinite(reps)):
        return None  # withheld_undefined_statistic
    ordered = np.sort(reps)
    tail = (1 - CONFIDENCE) / 2
    return [_percentile(ordered, tail), _percentile(ordered, 1 - tail)]


class _Scope:
    """The statistics that share one multiplicity map: their parents are the scope's clusters."""

    def __init__(self, n_parents: int) -> None:
        self.parents = np.zeros(n_parents, dtype=bool)
        self.columns: list[np.ndarray] = []
        self.dedup: dict[bytes, int] = {}
        self.replicates: np.ndarray | None = None

    def column(self, vector: np.ndarray) -> int:
        digest = vector.tobytes()
        index = self.dedup.get(digest)
        if index is None:
            index = len(self.columns)
            self.columns.append(vector)
            self.dedup[digest] = index
        return index


class _Engine:
    def __init__(self, n_parents: int, n_types: int) -> None:
        self.n_parents = n_parents
        self.n_types = n_types
        self.scopes: dict[str, _Scope] = {}

    def agg(
        self, scope: str, parent: np.ndarray, kind: np.ndarray, values: np.ndarray, probes: int | None = None
    ) -> _Agg:
        """Agg over the given items; ``values`` holds NaN for infrastructure-missing items. The items'
        parents (missing ones included) join the clusters of ``scope``."""
        box = self.scopes.setdefault(scope, _Scope(self.n_parents))
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
            columns.append((box.column(mean_lo), box.column(present.astype(np.float64))))
        box.parents |= present_any
        if not columns:
            return _Agg(scope, [], None, None, False, 0, 0)
        return _Agg(
            scope,
            columns,
            float(np.mean(lo_parts)),
            float(np.mean(hi_parts)),
            bool(missing.any()),
            int(present_any.sum()),
            int(probes if probes is not None else values.size),
        )

    def run(self, resamples: int, seed: int) -> None:
        """Kit §5.7 per scope: its clusters are its own sorted parents, drawn with a fresh
        ``random.Random(seed)``; every statistic of the scope (all conditions) uses those counts."""
        draws: dict[int, np.ndarray] = {}  # same cluster count → same draw matrix
        same_parents: dict[bytes, list[_Scope]] = {}  # scopes with the same clusters: one matrix product
        for box in self.scopes.values():
            if box.columns and box.parents.any():
                same_parents.setdefault(box.parents.tobytes(), []).append(box)
        for boxes in same_parents.values():
            rows = np.flatnonzero(boxes[0].parents)  # parents are sorted by id: rows are the sorted clusters
            if rows.size not in draws:
                draws[rows.size] = multiplicities(int(rows.size), resamples, seed)
            stacked = np.column_stack([column[rows] for box in boxes for column in box.columns])
            replicates = draws[rows.size] @ stacked
            offset = 0
            for box in boxes:
                box.replicates = replicates[:, offset : offset + len(box.columns)]
                offset += len(box.columns)

    def clusters(self, scope: str) -> int:
        return int(self.scopes[scope].parents.sum())

    def reps(self, agg: _Agg) -> np.ndarray | None:
        y = self.scopes[agg.scope].replicates
        if y is None or not agg.columns:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            parts = [
                np.where(y[:, d] > 0, y[:, n] / np.where(y[:, d] > 0, y[:, d], 1.0), np.nan)
                for n, d in agg.columns
            ]
        return np.mean(parts, axis=0)


# ----------------------------------------------------------------------------------------------- statistics


def _simple(engine: _Engine, agg: _Agg) -> Stat:
    return Stat(
        agg.value,
        agg.lo,
        agg.hi,
        agg.parents,
        agg.probes,
        engine.reps(agg) if agg.value is not None else None,
        agg.scope,
        engine.clusters(agg.scope),
    )


def _same_scope(a: Stat, b: Stat) -> None:
    if a.scope != b.scope:  # replicates of two scopes are not paired draws
        raise AssertionError(f"statistics of scopes {a.scope!r} and {b.scope!r} cannot be combined")


def _difference(a: Stat, b: Stat) -> Stat:
    """a − b with the delta bounds [lo_a − hi_b, hi_a − lo_b] (Kit ``delta_BAcc_bounds``)."""
    _same_scope(a, b)
    value = None if a.value is None or b.value is None else a.value - b.value
    lower = None if a.lower is None or b.upper is None else a.lower - b.upper
    upper = None if a.upper is None or b.lower is None else a.upper - b.lower
    reps = a.reps - b.reps if value is not None and a.reps is not None and b.reps is not None else None
    support = a if a.probes >= b.probes else b
    return Stat(value, lower, upper, support.parents, support.probes, reps, a.scope, a.clusters)


def _ratio(a: Stat, b: Stat) -> Stat:
    """a / b where a ≤ b item-wise (a conditional rate); null when b is 0."""
    _same_scope(a, b)
    value = None if a.value is None or b.value is None or b.value == 0 else a.value / b.value
    lower = None if a.lower is None or not b.upper else a.lower / b.upper
    upper = None if a.upper is None or not b.lower else min(1.0, a.upper / b.lower)
    reps = None
    if value is not None and a.reps is not None and b.reps is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            reps = np.where(b.reps != 0, a.reps / np.where(b.reps != 0, b.reps, 1.0), np.nan)
    return Stat(value, lower, upper, b.parents, b.probes, reps, b.scope, b.clusters)


def _complement(a: Stat) -> Stat:
    return Stat(
        None if a.value is None else 1 - a.value,
        None if a.upper is None else 1 - a.upper,
        None if a.lower is None else 1 - a.lower,
        a.parents,
        a.probes,
        None if a.reps is None else 1 - a.reps,
        a.scope,
        a.clusters,
    )


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


KIT_PAIRED = ("GAcc", "CAcc", "JAcc", "GAcc_L", "GAcc_given_C", "GErr_given_C", "GAcc_gold", "delta")


# ----------------------------------------------------------------------------------------------- plan
# compute_metrics first plans every Agg_S (each joins its scope's clusters, in a fixed order), then runs the
# bootstrap once, then turns the plans into statistics. The planners below are called in that fixed order.


@dataclass
class _Planner:
    """The columns and the bootstrap engine, with the probe-level metadata the plans share (taken from
    the first item of each probe)."""

    a: _Items
    engine: _Engine
    n_probes: int
    unique: np.ndarray  # the first item of each probe
    probe_parent: np.ndarray
    probe_kind: np.ndarray
    probe_in_l: np.ndarray
    correct_nearest: np.ndarray

    @classmethod
    def build(cls, a: _Items, n_items: int, engine: _Engine, n_probes: int) -> _Planner:
        _, first = np.unique(a.probe, return_index=True)
        unique = np.zeros(n_items, dtype=bool)
        unique[first] = True
        return cls(
            a,
            engine,
            n_probes,
            unique,
            a.parent[first],
            a.kind[first],
            a.in_l[first],
            (a.nearest == 0).astype(np.float64),
        )

    def agg(self, scope: str, mask: np.ndarray, values: np.ndarray) -> _Agg:
        """Agg over the items of ``mask``; its probes are the distinct probes among them."""
        a = self.a
        return self.engine.agg(
            scope, a.parent[mask], a.kind[mask], values[mask], probes=int(np.unique(a.probe[mask]).size)
        )

    def by_probe(self, mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        """One value per probe from the items of ``mask``; NaN where there is none or it is missing."""
        out = np.full(self.n_probes, np.nan)
        out[self.a.probe[mask]] = values[mask]
        return out

    def probe_mask(self, mask: np.ndarray) -> np.ndarray:
        """Per probe: whether any item of ``mask`` belongs to it."""
        out = np.zeros(self.n_probes, dtype=bool)
        out[self.a.probe[mask]] = True
        return out

    def per_probe(self, scope: str, sel: np.ndarray, values: np.ndarray) -> _Agg:
        """Agg over the probes of ``sel`` (a per-probe mask) with one value per probe."""
        return self.engine.agg(
            scope, self.probe_parent[sel], self.probe_kind[sel], values[sel], probes=int(sel.sum())
        )


def _plan_baselines(pl: _Planner) -> dict[str, _Agg]:
    """The baselines over distinct probes."""
    a = pl.a
    return {
        "random": pl.agg("baseline.random", pl.unique & a.in_b, a.chance),
        "nearest": pl.agg("baseline.nearest", pl.unique & (a.nearest != 2), pl.correct_nearest),
    }


def _plan_full(pl: _Planner, scope: str, raw: np.ndarray) -> dict[str, _Agg]:
    """The Kit's raw_all report: every raw probe of the model."""
    a = pl.a
    C, G = a.C, a.G
    in_b, in_l = raw & a.in_b, raw & a.in_l
    return {
        "GAcc": pl.agg(scope, in_b, G),
        "CAcc": pl.agg(scope, in_l, C),
        "JAcc": pl.agg(scope, in_l, C * G),
        "GAcc_L": pl.agg(scope, in_l, G),
        "q10": pl.agg(scope, in_l, C * (1 - G)),
        "q01": pl.agg(scope, in_l, (1 - C) * G),
        "q00": pl.agg(scope, in_l, (1 - C) * (1 - G)),
    }


def _plan_paired_set(pl: _Planner, scope: str, raw: np.ndarray, gold: np.ndarray) -> dict[str, _Agg]:
    """The paper's paired set P_m: probes of L∩P whose raw and gold responses were both returned."""
    a = pl.a
    G = a.G
    paired = a.returned & a.in_l & a.in_p
    paired_probe = (pl.probe_mask(raw & paired) & pl.probe_mask(gold & paired))[a.probe]
    paired_raw, paired_gold = raw & paired_probe, gold & paired_probe
    g_gold = pl.by_probe(paired_gold, G)[a.probe]
    p = {"base": pl.agg(scope, paired_raw, G), "gt": pl.agg(scope, paired_gold, G)}
    for x in (0, 1):
        for y in (0, 1):
            p[f"T{x}{y}"] = pl.agg(scope, paired_raw, ((G == x) & (g_gold == y)).astype(np.float64))
    p["raw_zero"] = pl.agg(scope, paired_raw, 1 - G)
    p["raw_one"] = pl.agg(scope, paired_raw, G)
    return p


def _plan_kit_paired(pl: _Planner, scope: str, raw: np.ndarray, gold: np.ndarray) -> dict[str, _Agg] | None:
    """The Kit's paired report: every P probe of the model, missing responses as bounds; None for a model
    with no +GT response."""
    a = pl.a
    in_p = pl.probe_mask((raw | gold) & a.in_p)
    if not (in_p.any() and gold.any()):
        return None
    raw_g, raw_c, gold_g = pl.by_probe(raw, a.G), pl.by_probe(raw, a.C), pl.by_probe(gold, a.G)
    lp = in_p & pl.probe_in_l
    return {
        "GAcc": pl.per_probe(scope, in_p, raw_g),
        "CAcc": pl.per_probe(scope, lp, raw_c),
        "JAcc": pl.per_probe(scope, lp, raw_c * raw_g),
        "GAcc_L": pl.per_probe(scope, lp, raw_g),
        "GAcc_gold": pl.per_probe(scope, in_p, gold_g),
    }


def _plan_controls(pl: _Planner, model: str, mine: np.ndarray, raw: np.ndarray) -> dict[str, _Agg]:
    """A control and its raw reference share one scope (their parents), so their Δ is paired."""
    a = pl.a
    p = {}
    for cond_index, cond in ((2, "no_image"), (3, "reordered")):
        control = mine & (a.condition == cond_index) & a.in_b
        p[cond] = pl.agg(f"{model}.{cond}", control, a.G)
        p[f"{cond}_reference"] = pl.agg(f"{model}.{cond}", raw & a.in_b if control.any() else control, a.G)
    return p


def _plan_hard_sets(pl: _Planner, model: str, raw: np.ndarray) -> dict[str, _Agg]:
    """H (raw probes whose nearest outcome applies) and H_hard (those whose nearest outcome is wrong)."""
    a = pl.a
    h, hard = raw & (a.nearest != 2), raw & (a.nearest == 1)
    h_scope, hard_scope = f"{model}.H", f"{model}.H_hard"
    return {
        "H_model": pl.agg(h_scope, h, a.G),
        "H_nearest": pl.agg(h_scope, h, pl.correct_nearest),
        "H_random": pl.agg(h_scope, h, a.chance),
        "Hh_model": pl.agg(hard_scope, hard, a.G),
        "Hh_random": pl.agg(hard_scope, hard, a.chance),
        "Hh_CpGm": pl.agg(hard_scope, hard & a.in_l, a.C * (1 - a.G)),
        "Hh_C": pl.agg(hard_scope, hard & a.in_l, a.C),
    }


def _plan_model(pl: _Planner, m_index: int, model: str) -> dict[str, Any]:
    a = pl.a
    mine = a.model == m_index
    raw = mine & (a.condition == 0)
    gold = mine & (a.condition == 1)
    p: dict[str, Any] = _plan_full(pl, f"{model}.full", raw)
    p.update(_plan_paired_set(pl, f"{model}.P_m", raw, gold))
    p["kit_paired"] = _plan_kit_paired(pl, f"{model}.P", raw, gold)
    p.update(_plan_controls(pl, model, mine, raw))
    p.update(_plan_hard_sets(pl, model, raw))
    return p


# ----------------------------------------------------------------------------------------------- report


def _kit_paired_stats(engine: _Engine, plan: dict[str, _Agg]) -> dict[str, Stat]:
    k = {name: _simple(engine, x) for name, x in plan.items()}
    k_given = _ratio(k["JAcc"], k["CAcc"])
    stats = {
        **k,
        "GAcc_given_C": k_given,
        "GErr_given_C": _complement(k_given),
        "delta": _difference(k["GAcc_gold"], k["GAcc"]),
    }
    return {name: stats[name] for name in KIT_PAIRED}


def _model_stats(engine: _Engine, p: dict[str, Any]) -> dict[str, Any]:
    """A model's statistics from its plan (after the bootstrap ran)."""

    def s(x: _Agg) -> Stat:
        return _simple(engine, x)

    gacc, cacc, jacc = s(p["GAcc"]), s(p["CAcc"]), s(p["JAcc"])
    given = _ratio(jacc, cacc)
    base, gt = s(p["base"]), s(p["gt"])
    h_model, h_near, h_rand = s(p["H_model"]), s(p["H_nearest"]), s(p["H_random"])
    hh_model, hh_rand = s(p["Hh_model"]), s(p["Hh_random"])
    cpgm = s(p["Hh_CpGm"])
    stats: dict[str, Any] = {
        "GAcc": gacc,
        "CAcc": cacc,
        "JAcc": jacc,
        "GAcc_L": s(p["GAcc_L"]),
        "GAcc_given_C": given,
        "GErr_given_C": _complement(given),
        "quadrants": {"q11": jacc, "q10": s(p["q10"]), "q01": s(p["q01"]), "q00": s(p["q00"])},
        "paired": {
            "base": base,
            "gt": gt,
            "delta": _difference(gt, base),
            "repair_share": s(p["T01"]),
            "harm_share": s(p["T10"]),
            "repair_rate": _ratio(s(p["T01"]), s(p["raw_zero"])),
            "harm_rate": _ratio(s(p["T10"]), s(p["raw_one"])),
        },
        "kit_paired": None,
        "H": {
            "model": h_model,
            "nearest": h_near,
            "random": h_rand,
            "model_minus_nearest": _difference(h_model, h_near),
        },
        "H_hard": {
            "model": hh_model,
            "random": hh_rand,
            "model_minus_random": _difference(hh_model, hh_rand),
            "CpGm_share": cpgm,
            "GErr_given_C": _ratio(cpgm, s(p["Hh_C"])),
        },
    }
    for cond in ("no_image", "reordered"):
        control = s(p[cond])
        stats[cond] = {"GAcc": control, "delta": _difference(control, s(p[f"{cond}_reference"]))}
    if p["kit_paired"] is not None:
        stats["kit_paired"] = _kit_paired_stats(engine, p["kit_paired"])
    return stats


def _bootstrap_summary(engine: _Engine, resamples: int, seed: int, n_parents: int) -> dict[str, Any]:
    return {
        "resamples": resamples,
        "seed": seed,
        "confidence": CONFIDENCE,
        "clusters": n_parents,
        "cluster_scope": "statistic",
        "scopes": {name: engine.clusters(name) for name in sorted(engine.scopes) if engine.clusters(name)},
        "method": "paired_cluster_percentile_linear_interpolation",
    }


def compute_metrics(
    items: Iterable[dict[str, Any]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Everything of the item-file contract. Fractions in [0, 1]. ``items`` may be a stream (a generator
    over a run's rows): each record is read once, validated and kept only as columns (``ItemColumns``)."""
    builder = ItemColumns()
    for item in items:
        builder.add(item)
    if resamples < 2:
        raise ItemFileError("at least two bootstrap resamples are required")
    a, names = builder.finish()
    models, parents = names["model"], names["parent_id"]
    engine = _Engine(len(parents), len(names["task_id"]))
    planner = _Planner.build(a, builder.count, engine, len(names["probe_id"]))
    baselines = _plan_baselines(planner)
    plans = {model: _plan_model(planner, m_index, model) for m_index, model in enumerate(models)}
    engine.run(resamples, seed)
    return {
        "models": {model: _render(_model_stats(engine, plans[model])) for model in models},
        "baselines": {name: _simple(engine, x).as_dict() for name, x in baselines.items()},
        "bootstrap": _bootstrap_summary(engine, resamples, seed, len(parents)),
    }


def _render(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, Stat):
        return value.as_dict()
    return {k: _render(v) for k, v in value.items()}


def iter_statistics(result: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(model or "baseline", dotted metric name, statistic) for every statistic of a result."""

    def walk(prefix: str, node: dict[str, Any] | None) -> Iterable[tuple[str, dict[str, Any]]]:
        if node is None:  # e.g. kit_paired of a model without gold responses
            return
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
