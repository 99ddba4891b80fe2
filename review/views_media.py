"""Images for review pages that are not a probe's own attachments: the parent's original images, for a
probe's reviewer once its target may be revealed (``review.media.parent_originals``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from probes.models import Probe

from .media import parent_originals
from .models import ReviewSlot
from .permissions import can_work_slot
from .selectors import slot_work


@login_required
@require_GET
def parent_image(request: HttpRequest, slot_id: int, logical_probe_id: str, image_id: str) -> FileResponse:
    """One original image of the probe's parent: the slot's reviewer only (403 for anyone else, and with the
    gate's reason before the blind order opens this probe's target); 404 for a probe outside the slot or an
    image of another parent."""
    slot = get_object_or_404(ReviewSlot.objects.select_related("parent"), pk=slot_id)
    if not can_work_slot(request.user, slot):
        raise PermissionDenied
    probe = get_object_or_404(Probe.objects.select_related("parent"), logical_probe_id=logical_probe_id)
    if probe.pk not in {p.pk for p in slot_work(slot, include_done=True)}:
        raise Http404
    originals = parent_originals(slot, probe)
    if not originals.gate.allowed:
        raise PermissionDenied(originals.gate.message)
    image = originals.get(image_id)
    if image is None:
        raise Http404
    try:
        handle = image.file.open("rb")
    except (FileNotFoundError, ValueError) as exc:
        raise Http404("The image file is missing from storage.") from exc
    response = FileResponse(handle, content_type=image.media_type)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
