"""Who may do what in review. Used by views and the API alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import ADJUDICATOR, PROBE_REVIEWER, has_role, is_admin

from .models import BlindAnswer, ReviewSlot


def can_review(user: Any) -> bool:
    """Take and work on review slots (probe reviewers and adjudicators; admins hold every role)."""
    return has_role(user, PROBE_REVIEWER, ADJUDICATOR)


def can_work_slot(user: Any, slot: ReviewSlot) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and slot.reviewer_id == user.pk


def can_reveal(user: Any, slot: ReviewSlot, probe: Any) -> bool:
    """The private side of a probe is shown only to the slot's reviewer, after their blind answer on the
    probe's current content (blind-first, Kit §6.2/§6.4)."""
    return can_work_slot(user, slot) and BlindAnswer.objects.filter(
        slot=slot, probe=probe, review_target_root=probe.review_target_root).exists()


def can_manage_audit(user: Any) -> bool:
    """Campaigns, plans, assessments, signoff and release export."""
    return is_admin(user)


def can_view_agreement(user: Any) -> bool:
    """Agreement and accounting: admins and adjudicators (reviewers would learn each other's answers)."""
    return has_role(user, ADJUDICATOR)
