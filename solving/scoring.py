"""Original-problem solving score (App. B.4) and the solve-link analysis (App. D.3, Table 17). Django-free.

- :func:`extract_boxed_answer`: the final answer of a free-form solution: the content of the last
  ``\\boxed{…}`` (balanced braces), else the last ``<answer>…</answer>`` block, else ``""``.
- :func:`match_answer`: ``s_i = Match(ExtractBox(y_i), a_i) ∈ {0, 1}`` for choice and fill-in problems.
  Choice compares option-letter sets (``B``, ``(B)``, ``B.``, ``A, C`` = ``AC``; an answer that repeats an
  option's text counts as that option). Fill-in compares by value through the debate Canonicalizer
  (units, notation, 1 % relative tolerance), falling back to normalized string equality.
- :func:`credit_from_components`: ``Σ p_ik / Σ w_ik`` for short-answer and calculation problems, with
  ``0 ≤ p_ik ≤ w_ik`` and ``Σ w_ik > 0``.
- :func:`solve_acc`: SolveAcc, the equal-parent mean of ``s_i`` over the run's parents. A parent without a
  returned answer (infrastructure missing, or not yet graded) has no point value: like the probe metrics
  (App. B.3) the point value is then ``None`` and the bounds count the missing parents as 0 and as 1. Its 95%
  interval is the probe metrics' parent-cluster percentile bootstrap (``kit.bootstrap``).
- :func:`solve_link`: Table 17 / Figure 5. Per model, local grounding ``G`` on the run's L probes (raw
  condition) is averaged within each parent first, then across the parents of the solve-wrong and
  solve-correct groups (binary final-answer correctness); ``Δsolve = Ḡ_correct − Ḡ_wrong``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kit.bootstrap import equal_parent_mean_interval

from .debate.canonical import canonicalize, same_value
from .debate.extract import _last_boxed, parse_solver_output

SCRIPTED_TYPES = ("choice", "fill")
EXPERT_TYPES = ("short", "calc")
ANSWER_TYPES = SCRIPTED_TYPES + EXPERT_TYPES


# ------------------------------------------------------------------------------------------------ extraction


def extract_boxed_answer(text: str | None) -> str:
    """The last non-empty ``\\boxed{…}`` (or ``\\fbox``) content; else the last ``<answer>`` block; else ""."""
    if not text:
        return ""
    boxed = _last_boxed(text)
    if boxed:
        return boxed
    tagged = parse_solver_output(text).answer
    if tagged:
        inner = _last_boxed(tagged)
        return (inner or tagged).strip()
    return ""


# ------------------------------------------------------------------------------------------------ matching


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}", r"\1", text)
    text = text.replace("$", "").replace("\\,", "").replace("\\ ", " ").replace("\\!", "")
    text = re.sub(r"\s+", " ", text).strip().strip(".。").strip()
    return text.casefold()


def choice_letters(answer: str, options: Sequence[Mapping[str, Any]] | None = None) -> frozenset[str]:
    """The set of option letters an answer selects (empty when it selects none)."""
    parsed = canonicalize(answer)
    if parsed.kind == "choice":
        return frozenset(parsed.letters)
    folded = _fold(answer)
    compact = re.sub(r"[\s,;、，/&]+|\band\b", "", folded)
    valid = {str(o.get("id", "")).upper() for o in options or []} or set("ABCDEFGH")
    if (
        re.fullmatch(r"[a-h]{1,8}", compact)
        and set(compact.upper()) <= valid
        and len(set(compact)) == len(compact)
    ):
        return frozenset(compact.upper())
    for option in options or []:
        text = _fold(str(option.get("text", "")))
        if text and folded in (
            text,
            f"{_fold(str(option.get('id', '')))}. {text}",
            f"({_fold(str(option.get('id', '')))}) {text}",
        ):
            return frozenset({str(option.get("id", "")).upper()})
    return frozenset()


def match_answer(
    extracted: str, reference: str, answer_type: str, options: Sequence[Mapping[str, Any]] | None = None
) -> bool:
    """``Match(ExtractBox(y), a)`` for choice and fill-in problems. An empty extraction never matches."""
    if answer_type not in SCRIPTED_TYPES:
        raise ValueError(f"answer type {answer_type!r} is graded by an expert, not by script")
    if not extracted or not extracted.strip() or not reference or not reference.strip():
        return False
    if answer_type == "choice":
        got, want = choice_letters(extracted, options), choice_letters(reference, options)
        return bool(got) and got == want
    if _fold(extracted) == _fold(reference):
        return True
    try:
        return same_value(extracted, reference)
    except Exception:  # the canonicalizer never should raise; a parse failure is simply "no match"
        return False


# ------------------------------------------------------------------------------------------------ credit


def credit_from_components(components: Iterable[tuple[float, float]]) -> float:
    """Normalized expert credit ``Σ p / Σ w``. Raises ``ValueError`` on an invalid rubric."""
    items = [(float(a), float(w)) for a, w in components]
    if not items:
        raise ValueError("a grade needs at least one rubric component")
    for awarded, maximum in items:
        if not maximum > 0:
            raise ValueError("every component's maximum must be positive")
        if not 0 <= awarded <= maximum:
            raise ValueError("awarded points must lie between 0 and the component's maximum")
    total = sum(w for _, w in items)
    return min(1.0, max(0.0, sum(a for a, _ in items) / total))


# ------------------------------------------------------------------------------------------------ SolveAcc


@dataclass(frozen=True)
class SolveAccStat:
    """SolveAcc with App. B.3 bounds: ``value`` is None when any parent is missing."""

    value: float | None
    lower: float | None
    upper: float | None
    parents: int
    missing: int
    ci: list[float] | None = None  # 95% parent-cluster bootstrap interval, only beside a point value

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


SOLVE_ACC_RESAMPLES = 2000  # as the probe metrics (App. B: 2,000 source-parent resamples, seed 2027)


def solve_acc(
    credits: Mapping[str, float | None] | Sequence[float | None],
    *,
    seed: int | None = None,
    resamples: int = SOLVE_ACC_RESAMPLES,
) -> SolveAccStat:
    """Equal-parent mean of ``s_i`` (one credit per parent; ``None`` = no answer to score).

    With a ``seed``, its 95% interval too, drawn as the probe metrics draw theirs (``kit.bootstrap``: parent
    clusters in sorted parent-id order for a mapping, in the given order for a sequence); no interval
    while a parent is missing (no point value), as a null point value withholds the probe metrics' CI."""
    if isinstance(credits, Mapping):
        values = [credits[parent] for parent in sorted(credits)]
    else:
        values = list(credits)
    n = len(values)
    if n == 0:
        return SolveAccStat(None, None, None, 0, 0)
    present = [float(v) for v in values if v is not None]
    missing = n - len(present)
    total = sum(present)
    lower = total / n
    upper = (total + missing) / n
    if missing:
        return SolveAccStat(None, lower, upper, n, missing)
    ci = None if seed is None else equal_parent_mean_interval(present, resamples=resamples, seed=seed)
    return SolveAccStat(lower, lower, upper, n, missing, ci)


# ------------------------------------------------------------------------------------------------ solve link


@dataclass(frozen=True)
class SolveLink:
    """Table 17 for one model: mean parent-level G in the solve-wrong and solve-correct groups."""

    g_wrong: float | None
    g_correct: float | None
    delta: float | None
    parents_wrong: int
    parents_correct: int
    probes_wrong: int
    probes_correct: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def solve_link(
    g_items: Iterable[tuple[str, int | float | None]], correct_by_parent: Mapping[str, bool | None]
) -> SolveLink:
    """``g_items``: ``(parent_id, G)`` for each of the model's raw-condition L probes (``G`` None when the
    response is infrastructure-missing; such probes carry no grounding value and are left out).
    ``correct_by_parent``: binary final-answer correctness; ``None`` (no answer, or not graded yet) leaves
    the parent out. Only parents with at least one scored L probe and a solve verdict enter a group."""
    per_parent: dict[str, list[float]] = defaultdict(list)
    for parent_id, g in g_items:
        if g is not None:
            per_parent[parent_id].append(float(g))
    groups: dict[bool, list[tuple[float, int]]] = {True: [], False: []}
    for parent_id, values in per_parent.items():
        verdict = correct_by_parent.get(parent_id)
        if verdict is None or not values:
            continue
        groups[bool(verdict)].append((sum(values) / len(values), len(values)))

    def mean(group: list[tuple[float, int]]) -> float | None:
        return sum(m for m, _ in group) / len(group) if group else None

    g_wrong, g_correct = mean(groups[False]), mean(groups[True])
    delta = g_correct - g_wrong if g_wrong is not None and g_correct is not None else None
    return SolveLink(
        g_wrong,
        g_correct,
        delta,
        len(groups[False]),
        len(groups[True]),
        sum(n for _, n in groups[False]),
        sum(n for _, n in groups[True]),
    )
