"""The parent's original images for a probe reviewer, on the reveal page.

The blind page shows exactly the probe's public attachments. Once the blind order opens a probe's target
(``BlindProgress.reveal_gate``), its reviewer may also look at the parent's original images, the source of
every rendered view, at full resolution. Images are public parts of a problem (they carry no answer,
solution or pass document); the gate keeps the reveal page's order intact all the same. The page and the
image view both ask ``parent_originals``."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import ProblemImage
from probes.models import Probe

from .models import ReviewSlot
from .selectors import Gate, blind_progress


@dataclass(frozen=True)
class ParentOriginals:
    gate: Gate
    images: tuple[ProblemImage, ...]  # empty unless the gate is open

    def get(self, image_id: str) -> ProblemImage | None:
        return next((image for image in self.images if image.image_id == image_id), None)


def parent_originals(slot: ReviewSlot, probe: Probe) -> ParentOriginals:
    """The original images of ``probe``'s parent, in order, for the slot's reviewer once the probe's target
    may be revealed; none (with the gate's reason) before."""
    gate = blind_progress(slot).reveal_gate(probe)
    if not gate.allowed:
        return ParentOriginals(gate, ())
    return ParentOriginals(
        gate, tuple(ProblemImage.objects.filter(parent_id=probe.parent_id).order_by("ordinal"))
    )
