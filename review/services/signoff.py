"""Signoff (the release confirmations) and the release export it gates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release
from probes.releases import parent_is_synthetic, release_export

from ..models import (
    SIGNOFF_KEYS,
    AuditAssessment,
    Signoff,
)
from ..release_proof import release_authorization
from ..selectors import (
    development_parents_state,
    live_probes,
)


# Signoff and the gated export ---------------------------------------------------------------------------------------
def signoff_target(*, mode: str, assessment: AuditAssessment | None) -> tuple[str, str, list[str]]:
    """(split, target_root, admitted parents) for a signoff; recomputed at export to refuse stale signoffs."""
    if mode == Signoff.Mode.AUDIT:
        if assessment is None or not assessment.accepted:
            raise ApplicationError("Sign off an accepted audit assessment.", code="ASSESSMENT_NOT_ACCEPTED")
        latest = AuditAssessment.objects.filter(plan__campaign=assessment.plan.campaign).first()
        assert latest is not None  # ``assessment`` itself is one
        if latest.pk != assessment.pk:
            raise ApplicationError(
                "A newer assessment exists for this campaign.", code="ASSESSMENT_SUPERSEDED"
            )
        retained = set(assessment.result["retained_parents"])
        audited = set(assessment.plan.sample) | set(assessment.plan.risk)
        admitted = sorted(pid for pid in retained & audited if _parent_fully_approved(pid))
        return "test", assessment.result_root, admitted
    state = development_parents_state()
    admitted = state["approved_parents"]
    return "development", digest(state["roots"]), admitted


def _parent_fully_approved(problem_id: str) -> bool:
    probes = live_probes().filter(parent__problem_id=problem_id)
    return probes.exists() and not probes.exclude(state=Probe.State.APPROVED).exists()


@transaction.atomic
def signoff_create(
    *,
    actor: Any,
    mode: str,
    assessment: AuditAssessment | None,
    confirmations: dict[str, bool],
    evidence_ref: str,
) -> Signoff:
    if mode not in Signoff.Mode.values:
        raise ApplicationError("Unknown signoff mode.", code="SIGNOFF_MODE_INVALID")
    missing = [k for k in SIGNOFF_KEYS if confirmations.get(k) is not True]
    if missing:
        raise ApplicationError(
            "All six release confirmations are required.",
            code="SIGNOFF_CONFIRMATIONS_INCOMPLETE",
            extra={"missing": missing},
        )
    if not evidence_ref.strip():
        raise ApplicationError("Give an evidence reference.", code="SIGNOFF_EVIDENCE_REQUIRED")
    split, root, admitted = signoff_target(mode=mode, assessment=assessment)
    if not admitted:
        raise ApplicationError("No fully approved parent to release.", code="NO_COMPLETE_APPROVED_PARENTS")
    if mode == Signoff.Mode.INDIVIDUAL and development_parents_state()["blocking"]:
        raise ApplicationError(
            "Systemic, information or unresolved findings block the release.",
            code="SYSTEMIC_OR_UNRESOLVED_BLOCKS_RELEASE",
        )
    signoff = Signoff.objects.create(
        mode=mode,
        assessment=assessment if mode == Signoff.Mode.AUDIT else None,
        split=split,
        problem_ids=admitted,
        target_root=root,
        confirmations={k: True for k in SIGNOFF_KEYS},
        evidence_ref=evidence_ref.strip(),
        reviewer=actor,
    )
    event_record(
        actor=actor, verb="review.signoff", obj=signoff, after={"mode": mode, "parents": len(admitted)}
    )
    return signoff


def signoff_export(*, signoff: Signoff, output: Path, actor: Any) -> Release:
    """Export the release the signoff covers; refused when anything it covered has changed since."""
    if signoff.release_id:
        raise ApplicationError(
            "This signoff was already used for a release.", code="SIGNOFF_USED", status=409
        )
    split, root, admitted = signoff_target(mode=signoff.mode, assessment=signoff.assessment)
    if root != signoff.target_root or admitted != signoff.problem_ids:
        raise ApplicationError(
            "The signoff does not match the current review state.",
            code="SIGNOFF_WRONG_VERSION_OR_TARGET",
            status=409,
        )
    parents = ParentProblem.objects.filter(problem_id__in=admitted).select_related("source")
    release = release_export(
        split=split,
        output=output,
        actor=actor,
        problem_ids=admitted,
        authorization=release_authorization(signoff),
        synthetic_example=bool(admitted) and all(parent_is_synthetic(p) for p in parents),
    )
    Signoff.objects.filter(pk=signoff.pk).update(release=release)
    event_record(
        actor=actor, verb="review.signoff_export", obj=signoff, after={"release_id": release.release_id}
    )
    return release
