"""``{% parent_originals_panel slot probe %}``: the parent's original images in the zoomable viewer on the
reveal page, and a link to the problem page for roles that may open it (``review.media``)."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.permissions import can_view_problems
from probes.models import Probe
from review.media import parent_originals
from review.models import ReviewSlot

register = template.Library()


@register.inclusion_tag("review/_parent_originals.html", takes_context=True)
def parent_originals_panel(context: template.Context, slot: ReviewSlot, probe: Probe) -> dict[str, Any]:
    request = context.get("request")
    return {
        "slot": slot,
        "probe": probe,
        "originals": parent_originals(slot, probe),
        "can_open_problem": request is not None and can_view_problems(request.user),
    }
