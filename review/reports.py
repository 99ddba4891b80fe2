"""Read-only reports: inter-reviewer agreement and the accounting tables (our data in the shape of paper
Tables 4 and 5)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F

from probes.models import CompileIssue, CompileRun, Probe

from . import agreement
from .models import AuditAssessment, AuditPlan, BlindAnswer, ReviewDecision
from .selectors import live_probes, probe_outcomes


def _blind_label(blind: BlindAnswer) -> str:
    if blind.cannot_answer:
        return "cannot answer"
    assert blind.answer is not None  # blind_answer_or_cannot
    parts = []
    for key, value in sorted(blind.answer.items()):
        parts.append(
            f"{key}={','.join(value)}"
            if isinstance(value, list)
            else f"{key}=" + ";".join(f"{a}:{t}" for a, t in sorted(value.items()))
        )
    return " ".join(parts)


def _columns(*own: str) -> tuple[str, ...]:
    """A row's own columns plus what the report reads of its probe and reviewer (never the probe's JSON)."""
    username = get_user_model().USERNAME_FIELD
    return (*own, "probe__logical_probe_id", "probe__review_target_root", f"reviewer__{username}")


def agreement_report(*, context: str = "development") -> dict[str, Any]:
    """Per-probe agreement, Cohen's κ per reviewer pair, Fleiss' κ, on blind answers and on decisions (fresh
    roots only), and each reviewer's blind accuracy against the target (a human baseline)."""
    blinds = (
        BlindAnswer.objects.filter(slot__context=context)
        .select_related("probe", "reviewer")
        .only(*_columns("cannot_answer", "answer", "matches_target", "review_target_root"))
        .order_by("probe__logical_probe_id")
    )
    blind_ratings: dict[str, dict[str, str]] = defaultdict(dict)
    accuracy: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for blind in blinds:
        if blind.review_target_root != blind.probe.review_target_root:
            continue
        who = blind.reviewer.get_username()
        blind_ratings[blind.probe.logical_probe_id][who] = _blind_label(blind)
        accuracy[who][0] += int(bool(blind.matches_target))
        accuracy[who][1] += 1
    decision_ratings: dict[str, dict[str, str]] = defaultdict(dict)
    for decision in (
        ReviewDecision.objects.filter(slot__context=context)
        .select_related("probe", "reviewer")
        .only(*_columns("status", "severity", "review_target_root"))
    ):
        if decision.review_target_root == decision.probe.review_target_root:
            decision_ratings[decision.probe.logical_probe_id][decision.reviewer.get_username()] = (
                f"{decision.status}/{decision.severity}"
            )
    blind_items = agreement.per_item_agreement(blind_ratings)
    decision_items = agreement.per_item_agreement(decision_ratings)
    per_probe = [
        {
            "probe": q,
            "blind": blind_items.get(q),
            "decision": decision_items.get(q),
            "raters": len(blind_ratings.get(q, {})),
        }
        for q in sorted(set(blind_items) | set(decision_items))
    ]

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    return {
        "context": context,
        "probes_rated": len(blind_ratings),
        "probes_multi_rated": len(blind_items),
        "blind": {
            "pairs": agreement.pairwise_kappas(blind_ratings),
            "fleiss": agreement.fleiss_kappa(blind_ratings),
            "mean_probe_agreement": mean(list(blind_items.values())),
        },
        "decision": {
            "pairs": agreement.pairwise_kappas(decision_ratings),
            "fleiss": agreement.fleiss_kappa(decision_ratings),
            "mean_probe_agreement": mean(list(decision_items.values())),
        },
        "per_probe": per_probe,
        "accuracy": [
            {"reviewer": who, "correct": c, "answered": n, "accuracy": c / n if n else None}
            for who, (c, n) in sorted(accuracy.items())
        ],
    }


def agreement_json(report: dict[str, Any]) -> dict[str, Any]:
    def pairs(rows: list[agreement.PairKappa]) -> list[dict[str, Any]]:
        return [
            {
                "rater_a": p.rater_a,
                "rater_b": p.rater_b,
                "items": p.items,
                "observed": p.observed,
                "kappa": p.kappa,
            }
            for p in rows
        ]

    return {
        **report,
        "blind": {**report["blind"], "pairs": pairs(report["blind"]["pairs"])},
        "decision": {**report["decision"], "pairs": pairs(report["decision"]["pairs"])},
    }


def accounting_tables() -> dict[str, Any]:
    """Table 4 (candidate states, admission, re-review) and Table 5 (audit allocation and disposition)."""
    # Only the columns the tables count, never the probes' JSON: (pk, state, id, root, parent, source).
    probes = list(
        live_probes().values_list(
            "pk",
            "state",
            "logical_probe_id",
            "review_target_root",
            "parent__problem_id",
            "parent__source__name",
        )
    )
    states = Counter(p[1] for p in probes)
    run = CompileRun.objects.filter(status=CompileRun.Status.SUCCEEDED).values_list("pk", flat=True).first()
    blocked = CompileIssue.objects.filter(run_id=run).exclude(task_id="parent").count() if run else 0
    latest = AuditAssessment.objects.values_list("result", flat=True).first()
    excluded_parents = set(latest.get("confirmed_excluded_parents", [])) if latest is not None else set()
    approved = [p for p in probes if p[1] == Probe.State.APPROVED]
    withheld = [p for p in approved if p[4] in excluded_parents]
    stale_ids = set(
        ReviewDecision.objects.exclude(review_target_root=F("probe__review_target_root"))
        .values_list("probe_id", flat=True)
        .order_by()
    )
    rereviewed = [p for p in probes if p[0] in stale_ids]
    table4 = {
        "screening": [
            ("Approved by human review", states.get(Probe.State.APPROVED, 0)),
            ("Rejected by human review", states.get(Probe.State.REJECTED, 0)),
            (
                "Further review required (pending or in adjudication)",
                states.get(Probe.State.PENDING_REVIEW, 0),
            ),
            ("Blocked at compilation (probe groups, latest run)", blocked),
        ],
        "total": len(probes) + blocked,
        "admission": [
            ("Withheld through risk isolation", len(withheld)),
            ("Retained probes", len(approved) - len(withheld)),
        ],
        "rereview": [
            ("Recompiled probes re-reviewed by humans", len(rereviewed)),
            ("Approved after re-review", sum(p[1] == Probe.State.APPROVED for p in rereviewed)),
            ("Rejected after re-review", sum(p[1] == Probe.State.REJECTED for p in rereviewed)),
            ("Still awaiting re-review", sum(p[1] == Probe.State.PENDING_REVIEW for p in rereviewed)),
        ],
    }
    plan = AuditPlan.objects.order_by("-pk").first()
    table5: dict[str, Any] = {"plan": plan, "allocation": [], "disposition": []}
    if plan is not None:
        candidate_ids = set(plan.candidates)
        candidates = [p for p in probes if p[4] in candidate_ids]
        audited = {q for q in plan.target_roots}
        groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for _, _, qid, _, _, source in candidates:
            groups[source][0] += 1
            groups[source][1] += int(qid in audited)
        total = [sum(v[0] for v in groups.values()), sum(v[1] for v in groups.values())]
        table5["allocation"] = [
            (name, n, a, 100 * a / n if n else 0.0) for name, (n, a) in sorted(groups.items())
        ]
        table5["allocation_total"] = (total[0], total[1], 100 * total[1] / total[0] if total[0] else 0.0)
        rejected_before = set(
            ReviewDecision.objects.filter(status="rejected").values_list("probe_id", flat=True).order_by()
        )
        outcomes = probe_outcomes({p[0]: p[3] for p in probes if p[2] in audited}, plan.context)
        disposition: Counter[str] = Counter()
        for pk, outcome in outcomes.items():
            if outcome.state == "approved":
                disposition["after" if pk in rejected_before else "first"] += 1
            elif outcome.state == "pending":
                disposition["pending"] += 1
            else:
                disposition["excluded"] += 1
        n = len(audited) or 1
        rows = [
            ("Passed first review without revision", disposition["first"]),
            ("Passed after correction and reinspection", disposition["after"]),
            ("Rejected or unresolved; excluded", disposition["excluded"]),
            ("Not yet reviewed", disposition["pending"]),
        ]
        table5["disposition"] = [(label, count, 100 * count / n) for label, count in rows]
        accepted = disposition["first"] + disposition["after"]
        table5["accepted"] = (accepted, 100 * accepted / n)
        table5["audited_total"] = len(audited)
    return {"table4": table4, "table5": table5}
