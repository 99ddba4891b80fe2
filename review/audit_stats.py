"""Batch-audit statistics and sampling (Kit §7 Path B, policy ``PLAN_6_finite_population_v1``). Pure: no Django.

Everything here is integer arithmetic or seeded ``random.Random`` over sorted inputs, so the same campaign
nonce always gives the same plan and the same bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kit.canonical import digest

POLICY_ID = "PLAN_6_finite_population_v1"
PRIMARY_SAMPLE_MAX = 100
SECONDARY_SAMPLE_MAX = 25
RISK_BUDGET = 20
MAX_ROUNDS = 2
ALPHA_NUMERATOR, ALPHA_DENOMINATOR = 1, 40  # one-sided 97.5 %
LIMIT_NUMERATOR, LIMIT_DENOMINATOR = 1, 20  # 5 % defective parents
DEFECT_SEVERITIES = frozenset({"serious", "systemic", "information"})
RULE_BLOCKING_SEVERITIES = frozenset({"systemic", "information"})


def _check_counts(*values: object) -> None:
    if not all(type(v) is int for v in values):
        raise ValueError("INVALID_AUDIT_COUNTS: counts must be integers")


def hypergeom_upper(N: int, n: int, k: int) -> int:
    """The largest number of defective parents D in a population of N that is still compatible, at the
    one-sided 97.5 % level, with seeing k defective parents in a simple random sample of n.

    D is kept while ``40 · P_D[X ≤ k] ≥ 1`` with ``P_D[X ≤ k] = Σ C(D,x)·C(N−D,n−x) / C(N,n)``, compared in
    integers (equality keeps D, the conservative side). A sample of 0 says nothing: the bound is N.
    """
    _check_counts(N, n, k)
    if not 0 <= k <= n <= N:
        raise ValueError("INVALID_AUDIT_COUNTS: need 0 <= k <= n <= N")
    if n == 0:
        return N
    total = math.comb(N, n)

    def compatible(defective: int) -> bool:
        low, high = max(0, n - (N - defective)), min(k, n, defective)
        tail = sum(math.comb(defective, x) * math.comb(N - defective, n - x) for x in range(low, high + 1))
        return ALPHA_DENOMINATOR * tail >= ALPHA_NUMERATOR * total

    # compatibility only falls as D grows, so a binary search over [k, N] finds the edge
    low, high = k, N
    while low < high:
        middle = (low + high + 1) // 2
        if compatible(middle):
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True)
class FiniteRisk:
    population: int
    sample: int
    detected: int
    upper_original: int
    removed_confirmed: int
    remaining: int
    upper_remaining_numerator: int
    passes: bool

    @property
    def upper_remaining_fraction(self) -> float | None:
        return float(Fraction(self.upper_remaining_numerator, self.remaining)) if self.remaining else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "population_parents": self.population,
            "sample_parents": self.sample,
            "detected_sample_parents": self.detected,
            "upper_defective_parents_original": self.upper_original,
            "removed_confirmed_parents": self.removed_confirmed,
            "remaining_population_parents": self.remaining,
            "upper_remaining_numerator": self.upper_remaining_numerator,
            "upper_remaining_denominator": self.remaining,
            "upper_remaining_fraction": self.upper_remaining_fraction,
            "passes_5_percent": self.passes,
            "confidence": "one_sided_97.5_percent_hypergeometric",
        }


def finite_risk(N: int, n: int, k: int, removed: int) -> FiniteRisk:
    """The bound after whole confirmed-bad parents are removed: it passes iff some parents remain and
    ``(upper − removed) / remaining ≤ 1/20``. ``k`` stays the original count (adjudication never erases it)."""
    _check_counts(removed)
    if not 0 <= removed <= N:
        raise ValueError("REMOVAL_COUNT_INVALID")
    if removed > k + N - n:
        raise ValueError("REMOVED_DEFECTS_INCONSISTENT_WITH_ORIGINAL_SAMPLE")
    # risk parents outside the random sample can establish more known defects than the interval covers
    upper = max(hypergeom_upper(N, n, k), removed)
    remaining = N - removed
    numerator = upper - removed
    passes = remaining > 0 and numerator * LIMIT_DENOMINATOR <= remaining * LIMIT_NUMERATOR
    return FiniteRisk(N, n, k, upper, removed, remaining, numerator, passes)


# Sampling ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditSample:
    seed: str
    candidates: list[str]
    sample: list[str]
    secondary: list[str]
    risk: list[str]
    uncovered_risk_tags: list[str]
    blind_first: dict[str, str]


def round_seed(nonce: str, round_number: int) -> str:
    return digest([nonce, round_number, "fixed_simple_random_without_replacement"])


def parent_risk_tags(probes: Iterable[Mapping[str, Any]]) -> set[str]:
    """Risk tags of one parent from its probes' public metadata (rule, source, language, representation,
    repair, single/multi image)."""
    tags: set[str] = set()
    for probe in probes:
        meta = probe["metadata"]
        tags |= {
            digest(["rule", probe["interface"], meta.get("selector"), meta.get("packet_policy_id")]),
            digest(["source", meta.get("source_namespace")]),
            digest(["language", probe["language"]]),
            digest(["representation", meta.get("representation_kind")]),
            digest(["repair", meta.get("repair_applied_to_query")]),
            digest(["images", "multi" if meta.get("image_count", 1) > 1 else "single"]),
        }
    return tags


def draw_sample(
    *,
    nonce: str,
    round_number: int,
    parents: Mapping[str, list[Mapping[str, Any]]],
    development: Iterable[str] = (),
) -> AuditSample:
    """The audit plan of one round: random sample, secondary sample, risk parents, blind-first probes.

    ``parents`` maps problem_id → its probes (``logical_probe_id``, ``interface``, ``language``,
    ``metadata``). Development parents never enter the candidates.
    """
    seed = round_seed(nonce, round_number)
    rng = random.Random(int(seed, 16))
    candidates = sorted(set(parents) - set(development))
    sample = sorted(rng.sample(candidates, min(PRIMARY_SAMPLE_MAX, len(candidates))))
    secondary = sorted(rng.sample(sample, min(SECONDARY_SAMPLE_MAX, len(sample))))
    tags = {pid: parent_risk_tags(parents[pid]) for pid in candidates}
    covered: set[str] = set().union(*(tags[pid] for pid in sample)) if sample else set()
    risk: list[str] = []
    pool = [pid for pid in candidates if pid not in set(sample)]
    while pool and len(risk) < RISK_BUDGET:
        best = min(pool, key=lambda pid: (-len(tags[pid] - covered), digest([seed, "risk", pid])))
        if not tags[best] - covered:
            break
        risk.append(best)
        covered |= tags[best]
        pool.remove(best)
    every_tag = set().union(*tags.values()) if tags else set()
    blind_first = {
        pid: min(
            (p["logical_probe_id"] for p in parents[pid]), key=lambda qid: digest([seed, "blind-first", qid])
        )
        for pid in sample + sorted(risk)
    }
    return AuditSample(
        seed=seed,
        candidates=candidates,
        sample=sample,
        secondary=secondary,
        risk=sorted(risk),
        uncovered_risk_tags=sorted(every_tag - covered),
        blind_first=blind_first,
    )


# Assessment --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """One reviewer's decision on one probe (the fields the assessment needs)."""

    reviewer: str
    status: str  # approved | rejected
    severity: str
    sequence: int


@dataclass
class Assessment:
    accepted: bool
    blockers: list[str]
    risk: FiniteRisk
    pending_primary: list[str] = field(default_factory=list)
    pending_secondary: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    systemic: list[str] = field(default_factory=list)
    escalated: bool = False
    required_secondary_parents: list[str] = field(default_factory=list)
    confirmed_excluded_parents: list[str] = field(default_factory=list)
    retained_parents: list[str] = field(default_factory=list)
    detected_sample_parents: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "blockers": self.blockers,
            "risk": self.risk.as_dict(),
            "pending_primary_probe_ids": self.pending_primary,
            "pending_secondary_probe_ids": self.pending_secondary,
            "unresolved_probe_ids": self.unresolved,
            "systemic_probe_ids": self.systemic,
            "secondary_escalated_to_all_audit_parents": self.escalated,
            "required_secondary_parents": self.required_secondary_parents,
            "confirmed_excluded_parents": self.confirmed_excluded_parents,
            "retained_parents": self.retained_parents,
            "original_observed_serious_sample_parents": self.detected_sample_parents,
            "protocol_violations": self.violations,
        }


def needs_adjudication(primary: Finding | None, secondary: Finding | None) -> bool:
    """A disagreement on (status, severity), or an ``unresolved`` severity from either reviewer."""
    if primary is None:
        return False
    if primary.severity == "unresolved" or (secondary is not None and secondary.severity == "unresolved"):
        return True
    return secondary is not None and (primary.status, primary.severity) != (
        secondary.status,
        secondary.severity,
    )


def assess(
    *,
    candidates: list[str],
    sample: list[str],
    secondary_parents: list[str],
    risk: list[str],
    uncovered_risk_tags: list[str],
    blind_first: Mapping[str, str],
    probes_by_parent: Mapping[str, list[str]],
    primary: Mapping[str, Finding],
    secondary: Mapping[str, Finding],
    resolutions: Mapping[str, Finding],
) -> Assessment:
    """Decide whether the audited batch may be released (Kit §6.5 audit rules). Findings are keyed by probe id.

    Original findings are counted before adjudication, so an adjudicated defect still counts in k.
    Independence and blind-first order violations are reported as blockers, never silently ignored.
    """
    reviewed = sorted(set(sample) | set(risk))
    pairs = [(pid, q) for pid in reviewed for q in probes_by_parent.get(pid, [])]
    pending_primary = sorted(q for _, q in pairs if q not in primary)
    tally = _Tally()
    _count_original(tally, pairs, primary, secondary)
    missed = _missed_by_primary(pairs, primary, secondary)
    required = set(reviewed) if missed else (set(secondary_parents) | tally.flagged)
    pending_secondary = sorted(
        q for pid in sorted(required) for q in probes_by_parent.get(pid, []) if q not in secondary
    )
    _count_final(tally, pairs, primary, secondary, resolutions)
    violations = tally.violations + _order_violations(
        reviewed, probes_by_parent, blind_first, primary, secondary
    )
    detected = sorted(set(sample) & tally.serious)
    risk_stats = finite_risk(len(candidates), len(sample), len(detected), len(tally.confirmed_bad))
    blockers = [
        code
        for failed, code in (
            (violations, "PROTOCOL_VIOLATION"),
            (pending_primary, "PRIMARY_INCOMPLETE"),
            (pending_secondary, "SECONDARY_INCOMPLETE_OR_ESCALATION_REQUIRED"),
            (tally.unresolved, "UNRESOLVED_DISAGREEMENTS"),
            (tally.systemic, "SYSTEMIC_OR_INFORMATION_DEFECT_WITHDRAW_RULE_VERSION"),
            (uncovered_risk_tags, "RISK_COVERAGE_INCOMPLETE_NO_INHERITANCE"),
            (not risk_stats.passes, "FINITE_POPULATION_BOUND_ABOVE_LIMIT"),
        )
        if failed
    ]
    return Assessment(
        accepted=not blockers,
        blockers=blockers,
        risk=risk_stats,
        pending_primary=pending_primary,
        pending_secondary=pending_secondary,
        unresolved=sorted(tally.unresolved),
        systemic=sorted(tally.systemic),
        escalated=bool(missed),
        required_secondary_parents=sorted(required),
        confirmed_excluded_parents=sorted(tally.confirmed_bad),
        retained_parents=sorted(set(candidates) - tally.confirmed_bad),
        detected_sample_parents=detected,
        violations=violations,
    )


@dataclass
class _Tally:
    """What ``assess`` counts over the audited (parent, probe) pairs."""

    flagged: set[str] = field(default_factory=set)  # parents either reviewer rejected a probe of
    serious: set[str] = field(default_factory=set)  # parents with an original rejection of a defect severity
    systemic: set[str] = field(default_factory=set)  # probes with a rule-blocking severity, original or final
    unresolved: set[str] = field(default_factory=set)  # probes whose final decision is still open
    confirmed_bad: set[str] = field(default_factory=set)  # parents with a final serious rejection
    violations: list[str] = field(default_factory=list)  # independence of the reviews, in probe order


def _count_original(
    tally: _Tally,
    pairs: list[tuple[str, str]],
    primary: Mapping[str, Finding],
    secondary: Mapping[str, Finding],
) -> None:
    """The original findings (before adjudication): rejections by either reviewer."""
    for pid, q in pairs:
        for finding in (primary.get(q), secondary.get(q)):
            if finding and finding.status == "rejected":
                tally.flagged.add(pid)
                if finding.severity in DEFECT_SEVERITIES:
                    tally.serious.add(pid)
                if finding.severity in RULE_BLOCKING_SEVERITIES:
                    tally.systemic.add(q)


def _missed_by_primary(
    pairs: list[tuple[str, str]], primary: Mapping[str, Finding], secondary: Mapping[str, Finding]
) -> set[str]:
    """Parents where the secondary reviewer found a defect the primary did not (the secondary review then
    extends to every audited parent)."""
    return {
        pid
        for pid, q in pairs
        if q in secondary
        and secondary[q].severity in DEFECT_SEVERITIES
        and (q not in primary or primary[q].severity not in DEFECT_SEVERITIES)
    }


def _final_finding(
    q: str, a: Finding, b: Finding | None, resolutions: Mapping[str, Finding], violations: list[str]
) -> Finding | None:
    """The finding that decides probe ``q``: its resolution, else the primary one when the reviewers agree;
    None while a disagreement awaits its resolution. Records where the reviews were not independent."""
    if b is not None and a.reviewer == b.reviewer:
        violations.append(f"SECOND_REVIEWER_MUST_BE_INDEPENDENT:{q}")
    disputed = needs_adjudication(a, b)
    if q not in resolutions:
        return None if disputed else a
    final = resolutions[q]
    if not disputed:
        violations.append(f"UNNECESSARY_RESOLUTION_NOT_ALLOWED:{q}")
    if final.reviewer in {a.reviewer, b.reviewer if b else None}:
        violations.append(f"INDEPENDENT_ADJUDICATOR_REQUIRED:{q}")
    return final


def _count_final(
    tally: _Tally,
    pairs: list[tuple[str, str]],
    primary: Mapping[str, Finding],
    secondary: Mapping[str, Finding],
    resolutions: Mapping[str, Finding],
) -> None:
    """The final decisions: a serious rejection excludes its parent; a rejection of a severity that neither
    excludes nor blocks the rule leaves the probe unresolved."""
    for pid, q in pairs:
        a = primary.get(q)
        if a is None:
            continue
        final = _final_finding(q, a, secondary.get(q), resolutions, tally.violations)
        if final is None:
            tally.unresolved.add(q)
            continue
        if final.severity in RULE_BLOCKING_SEVERITIES:
            tally.systemic.add(q)
        if final.status == "rejected":
            if final.severity == "serious":
                tally.confirmed_bad.add(pid)
            elif final.severity not in RULE_BLOCKING_SEVERITIES:
                tally.unresolved.add(q)


def _order_violations(
    reviewed: list[str],
    probes_by_parent: Mapping[str, list[str]],
    blind_first: Mapping[str, str],
    primary: Mapping[str, Finding],
    secondary: Mapping[str, Finding],
) -> list[str]:
    """Per role (primary, then secondary) and parent: one reviewer, who began with the blind-first probe."""
    violations = []
    for slot in (primary, secondary):
        for pid in reviewed:
            found = [(slot[q], q) for q in probes_by_parent.get(pid, []) if q in slot]
            if not found:
                continue
            if len({f.reviewer for f, _ in found}) != 1:
                violations.append(f"ONE_REVIEWER_PER_PARENT_PER_ROLE:{pid}")
            if min(found, key=lambda item: item[0].sequence)[1] != blind_first.get(pid):
                violations.append(f"AUDIT_BLIND_FIRST_ORDER_NOT_RESPECTED:{pid}")
    return violations


def review_complete(assessment: Assessment) -> bool:
    """Every required review and resolution is in (a failed *complete* round 1 may be followed by round 2)."""
    return not (assessment.pending_primary or assessment.pending_secondary or assessment.unresolved)
