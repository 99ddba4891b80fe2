"""The review hand-off: the review app records a probe's outcome through this, for its current content only."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from audit.services import event_record
from physalign_site.errors import ApplicationError

from ..models import Probe


@transaction.atomic
def probe_record_review(
    *,
    probe: Probe,
    actor: Any,
    state: str,
    packet_state: str,
    review_target_root: str,
    empty_reason: str | None = None,
) -> Probe:
    """Record the review outcome for the probe's current content; stale roots are refused."""
    probe = Probe.objects.select_for_update().get(pk=probe.pk)
    if probe.review_target_root != review_target_root:
        raise ApplicationError("The probe changed since it was reviewed.", code="AUDIT_STALE", status=409)
    if state not in (Probe.State.APPROVED, Probe.State.REJECTED):
        raise ApplicationError("Unknown review state.", code="invalid_state")
    ids = probe.key.view.observation_ids
    allowed = {"approved_nonempty", "rejected"} if ids else {"approved_empty", "rejected"}
    if packet_state not in allowed:
        raise ApplicationError(
            "This packet state does not fit the packet's content.", code="PACKET_STATE_CONTENT_MISMATCH"
        )
    before = {"state": probe.state, "packet_state": probe.packet_state}
    probe.state, probe.packet_state = state, packet_state
    probe.in_p = state == Probe.State.APPROVED and packet_state == "approved_nonempty"
    probe.save(update_fields=["state", "packet_state", "in_p", "updated_at"])
    key = probe.key
    plan = {
        **key.view.packet_plan,
        "state": packet_state,
        "review_ref": "qa-packet" if packet_state.startswith("approved") else None,
        "empty_reason": empty_reason if packet_state == "approved_empty" else None,
    }
    if packet_state == "approved_empty" and not plan["empty_reason"]:
        plan["empty_reason"] = "no_independent_readable_primitive"
    key.key = {**key.key, "packet_plan": plan}
    key.save(update_fields=["key"])
    event_record(
        actor=actor,
        verb="probe.review_recorded",
        obj=probe,
        before=before,
        after={"state": state, "packet_state": packet_state},
    )
    return probe
