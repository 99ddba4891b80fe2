"""Who may do what in review. Used by views and the API alike."""

from __future__ import annotations

from typing import Any

from audit.disclosure import can_know_targets
from physalign_site.roles import ADJUDICATOR, PROBE_REVIEWER, has_role, is_admin

from .models import ReviewSlot
from .selectors import blind_progress


def can_review(user: Any) -> bool:
    """Take and work on review slots (probe reviewers and adjudicators; admins hold every role)."""
    return has_role(user, PROBE_REVIEWER, ADJUDICATOR)


def can_work_slot(user: Any, slot: ReviewSlot) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and slot.reviewer_id == user.pk


def can_reveal(user: Any, slot: ReviewSlot, probe: Any) -> bool:
    """The private side of a probe is shown only to the slot's reviewer, after their blind answer on the
    probe's current content and, in the strict blind order, on every other probe of the slot
    (``BlindProgress.reveal_gate`` says which and why)."""
    return can_work_slot(user, slot) and blind_progress(slot).reveal_gate(probe).allowed


def is_key_holder(user: Any) -> bool:
    """Someone who can read every probe key: their review of a probe could never be blind, so they do not
    take review slots or submit blind answers (the scorer permission and review exclude each other)."""
    return can_know_targets(user)


def can_manage_audit(user: Any) -> bool:
    """Campaigns, plans, assessments, signoff and release export."""
    return is_admin(user)


def can_manage_kit_decisions(user: Any) -> bool:
    """The Kit decisions page and import: a Kit draft carries every probe's private key (catalog.PRIVATE.json),
    so key holders only (:func:`audit.disclosure.can_know_targets`)."""
    return can_manage_audit(user) and can_know_targets(user)


def can_view_agreement(user: Any) -> bool:
    """Agreement and accounting: admins and adjudicators (reviewers would learn each other's answers)."""
    return has_role(user, ADJUDICATOR)
