"""OCR runs and their proposals: create a run (one problem or a whole source), execute it on a worker, and
decide proposals (accept, edit, drop) into Pass 1 through the versioned save.

A run writes nothing but its counters until it has read every image; then one transaction replaces the
problems' undecided proposals with the new ones and marks it done. A run that fails (an unreadable image,
Tesseract missing, a crash) ends ``failed`` with the reason and has written no proposal, so a half-read source
is never shown as suggestions.

Decisions: ``accepted`` means kept exactly as proposed, ``edited`` kept after a change of box or text (an
"edit" that changes neither counts as accepted), ``dropped`` rejected. Analytics reads these per
``decided_by`` as OCR acceptance and edit rates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from django.db import transaction
from django.utils import timezone

from audit.services import event_record
from physalign_site.errors import ApplicationError

from ..models import OcrProposal, OcrRun, ParentProblem, PassDocument, ProblemImage, Source
from ..services import pass_document_save
from ..workspace import empty_document
from .permissions import OCR_PASS, can_decide_ocr, can_run_ocr, can_run_ocr_for_source
from .proposals import ENGINE, PIPELINE_VERSION, OcrInputError, OcrOptions, propose
from .selectors import ocr_run_active_for

Action = Literal["accept", "edit", "drop"]
OVERLAP_IOU = 0.5  # a proposal on a label Pass 1 already has (or the annotator dropped) is not proposed again
MAX_TEXT = 500


@dataclass(frozen=True)
class OcrDecision:
    proposal_id: int
    action: Action
    text: str | None = None
    bbox_1000: list[int] | None = None


@dataclass(frozen=True)
class OcrDecided:
    doc: PassDocument | None  # the Pass 1 document after the decisions (None: no Pass 1 and only drops)
    proposals: list[OcrProposal] = field(default_factory=list)


class OcrRunFailed(Exception):
    """A run cannot finish; the message is the reason stored on the run."""


def _user(actor: Any) -> Any:
    return actor if getattr(actor, "is_authenticated", False) else None


# --- runs ---------------------------------------------------------------------------------------------


def _run_options(raw: Any) -> dict[str, Any]:
    try:
        options = OcrOptions.from_dict(raw)
    except OcrInputError as exc:
        raise ApplicationError(str(exc), code="ocr_options_invalid") from exc
    return {"preprocessing": options.as_dict(), "engine": ENGINE, "pipeline": PIPELINE_VERSION}


@transaction.atomic
def ocr_run_create(
    *, actor: Any, parent: ParentProblem | None = None, source: Source | None = None, options: Any = None
) -> tuple[OcrRun, bool]:
    """Queue a run for one problem or for every problem of a source; ``(run, created)``.

    A problem (or source) with a run still queued or running gets that run back (``created`` False): the
    workspace polls it instead of starting a second one."""
    if (parent is None) == (source is None):
        raise ApplicationError("Name one problem or one source to read.", code="ocr_target_invalid")
    if parent is not None and not can_run_ocr(actor):
        raise ApplicationError("Only Pass 1 editors may run OCR on a problem.", code="forbidden", status=403)
    if source is not None and not can_run_ocr_for_source(actor):
        raise ApplicationError("Only admins may run OCR over a whole source.", code="forbidden", status=403)
    stored = _run_options(options)
    if parent is not None:
        ParentProblem.objects.select_for_update().filter(pk=parent.pk).first()
        images = ProblemImage.objects.filter(parent=parent)
    else:
        assert source is not None
        Source.objects.select_for_update().filter(pk=source.pk).first()
        images = ProblemImage.objects.filter(parent__source=source)
    active = ocr_run_active_for(parent=parent, source_id=source.pk if source else None)
    if active is not None:
        return active, False
    total = images.count()
    if total == 0:
        raise ApplicationError(
            "There is no image to read: this problem (or source) has no images.", code="ocr_no_images"
        )
    run = OcrRun.objects.create(
        parent=parent, source=source, options=stored, total=total, created_by=_user(actor)
    )
    event_record(
        actor=actor,
        verb="ocr_run.create",
        obj=run,
        after={
            "parent": parent.problem_id if parent else None,
            "source": source.name if source else None,
            "total": total,
            "options": stored,
        },
    )
    from .tasks import ocr_run_task

    transaction.on_commit(partial(ocr_run_task.delay, run.pk))
    return run, True


def _run_images(run: OcrRun) -> list[ProblemImage]:
    images = ProblemImage.objects.select_related("parent")
    if run.parent_id is not None:
        images = images.filter(parent_id=run.parent_id)
    elif run.source_id is not None:
        images = images.filter(parent__source_id=run.source_id)
    else:
        return []
    return list(images.order_by("parent__problem_id", "ordinal"))


def ocr_run_execute(*, run_id: int) -> OcrRun:
    """Read every image of a queued run, then write its proposals and mark it done in one transaction.

    Safe to run twice (the task is acks_late): a finished run is left alone, a run left ``running`` by a dead
    worker starts over (it wrote no proposal). Raises ``OcrRunFailed`` with the reason; the task records it."""
    claimed = OcrRun.objects.filter(
        pk=run_id, status__in=[OcrRun.Status.QUEUED, OcrRun.Status.RUNNING]
    ).update(status=OcrRun.Status.RUNNING, done=0, error="")
    run = OcrRun.objects.get(pk=run_id)
    if not claimed:
        return run
    try:
        options = OcrOptions.from_dict((run.options or {}).get("preprocessing"))
    except OcrInputError as exc:
        raise OcrRunFailed(str(exc)) from exc
    images = _run_images(run)
    OcrRun.objects.filter(pk=run_id).update(total=len(images))
    read: list[tuple[ProblemImage, list[tuple[list[int], str, float]]]] = []
    for done, image in enumerate(images, start=1):
        read.append((image, _read_image(image, options)))
        OcrRun.objects.filter(pk=run_id).update(done=done)
    return _run_finish(run_id, read)


def _read_image(image: ProblemImage, options: OcrOptions) -> list[tuple[list[int], str, float]]:
    where = f"{image.parent.problem_id}/{image.image_id}"
    try:
        with image.file.open("rb") as handle:
            data = handle.read()
    except (OSError, ValueError) as exc:
        raise OcrRunFailed(f"{where}: the image file cannot be opened ({exc}).") from exc
    try:
        result = propose(data, options)
    except OcrInputError as exc:
        raise OcrRunFailed(f"{where}: {exc}") from exc
    return [(p.bbox_1000, p.text[:MAX_TEXT], p.confidence) for p in result.proposals]


def _iou(a: list[int], b: list[int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _known_boxes(parent_ids: set[int]) -> dict[tuple[int, str], list[list[int]]]:
    """Per (parent, image_id): the boxes of Pass 1's text glyphs and of the proposals already dropped."""
    known: dict[tuple[int, str], list[list[int]]] = {}
    for doc in PassDocument.objects.filter(parent_id__in=parent_ids, pass_no=OCR_PASS):
        nodes = doc.document.get("visual_nodes") if isinstance(doc.document, dict) else None
        for node in nodes if isinstance(nodes, list) else []:
            box = node.get("bbox_1000") if isinstance(node, dict) else None
            if node.get("type") == "text_glyph" and isinstance(box, list) and len(box) == 4:
                known.setdefault((doc.parent_id, str(node.get("image_id"))), []).append(box)
    dropped = OcrProposal.objects.filter(parent_id__in=parent_ids, status=OcrProposal.Status.DROPPED)
    for proposal in dropped.select_related("image"):
        known.setdefault((proposal.parent_id, proposal.image.image_id), []).append(proposal.bbox_1000)
    return known


@transaction.atomic
def _run_finish(run_id: int, read: list[tuple[ProblemImage, list[tuple[list[int], str, float]]]]) -> OcrRun:
    run = OcrRun.objects.select_for_update().get(pk=run_id)
    if run.status != OcrRun.Status.RUNNING:
        return run
    parent_ids = {image.parent_id for image, _ in read}
    known = _known_boxes(parent_ids)
    superseded, _ = OcrProposal.objects.filter(
        parent_id__in=parent_ids, status=OcrProposal.Status.PROPOSED
    ).delete()
    rows = []
    skipped = 0
    for image, proposals in read:
        taken = known.get((image.parent_id, image.image_id), [])
        for box, text, confidence in proposals:
            if any(_iou(box, other) >= OVERLAP_IOU for other in taken):
                skipped += 1
                continue
            rows.append(
                OcrProposal(
                    run=run,
                    parent_id=image.parent_id,
                    image=image,
                    bbox_1000=box,
                    text=text,
                    confidence=confidence,
                )
            )
    OcrProposal.objects.bulk_create(rows)
    run.status = OcrRun.Status.DONE
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    event_record(
        actor=run.created_by,
        verb="ocr_run.done",
        obj=run,
        after={
            "images": len(read),
            "proposals": len(rows),
            "skipped_known": skipped,
            "superseded": superseded,
        },
    )
    return run


def ocr_run_fail(*, run_id: int, message: str) -> None:
    """End a run ``failed`` with the reason (it has written no proposal)."""
    with transaction.atomic():
        run = OcrRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status == OcrRun.Status.DONE:
            return
        run.status = OcrRun.Status.FAILED
        run.error = message[:2000]
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        event_record(actor=run.created_by, verb="ocr_run.fail", obj=run, after={"error": run.error})


# --- decisions ----------------------------------------------------------------------------------------


def _checked_box(box: Any) -> list[int]:
    if not (
        isinstance(box, list)
        and len(box) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 1000 for v in box)
        and box[0] < box[2]
        and box[1] < box[3]
    ):
        raise ApplicationError(
            "bbox_1000 must be [x_min, y_min, x_max, y_max], integers 0–1000 with x_min < x_max and "
            "y_min < y_max.",
            code="ocr_decision_invalid",
        )
    return list(box)


def _checked_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise ApplicationError(
            f"A label's text must be 1–{MAX_TEXT} characters, not only spaces.", code="ocr_decision_invalid"
        )
    return text.strip()


def _next_visual_number(nodes: list[Any]) -> int:
    numbers = [
        int(match.group(1))
        for node in nodes
        if isinstance(node, dict) and (match := re.fullmatch(r"v([0-9]{3,})", str(node.get("id", ""))))
    ]
    return max(numbers, default=0) + 1


def _visual_node(visual_id: str, image_id: str, box: list[int], text: str) -> dict[str, Any]:
    """A Pass 1 text glyph with every key of the Kit's visual_node record (RECORD_SPECS)."""
    return {
        "id": visual_id,
        "type": "text_glyph",
        "subtype": "label",
        "text": text,
        "image_id": image_id,
        "bbox_1000": box,
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",  # a person read it and kept it
    }


def _locked_proposals(parent: ParentProblem, decisions: list[OcrDecision]) -> dict[int, OcrProposal]:
    ids = [d.proposal_id for d in decisions]
    if not ids:
        raise ApplicationError("Send at least one decision.", code="ocr_decision_invalid")
    if len(set(ids)) != len(ids):
        raise ApplicationError("Each proposal may be decided once per request.", code="ocr_decision_invalid")
    found = {
        p.pk: p
        for p in OcrProposal.objects.select_for_update(of=("self",))
        .select_related("image")
        .filter(parent=parent, pk__in=ids)
    }
    missing = [i for i in ids if i not in found]
    if missing:
        raise ApplicationError(
            f"No such proposal on this problem: {', '.join(map(str, missing))}.",
            code="ocr_proposal_not_found",
            status=404,
        )
    decided = [i for i in ids if found[i].status != OcrProposal.Status.PROPOSED]
    if decided:
        raise ApplicationError(
            f"Already decided: proposal {', '.join(map(str, decided))}; reload the suggestions.",
            code="ocr_proposal_decided",
            status=409,
            extra={"proposal_ids": decided},
        )
    return found


@transaction.atomic
def ocr_proposals_decide(
    *, parent: ParentProblem, decisions: list[OcrDecision], actor: Any, expected_version: int | None
) -> OcrDecided:
    """Accept, edit or drop proposals of one problem, all at once or none.

    Accepted and edited proposals become Pass 1 text glyphs (new ids after the last ``v…``), saved in ONE
    ``pass_document_save`` with ``expected_version`` (If-Match: a stale version is a 409 and nothing changes,
    proposals included); the save carries a note so the history shows a version that came from OCR. Each
    proposal records its status, final box and text, visual_id, who and when; one audit event lists them."""
    if not can_decide_ocr(actor):
        raise ApplicationError("Only Pass 1 editors may decide OCR proposals.", code="forbidden", status=403)
    proposals = _locked_proposals(parent, decisions)
    doc = PassDocument.objects.select_for_update().filter(parent=parent, pass_no=OCR_PASS).first()
    document = (
        dict(doc.document)
        if doc is not None and isinstance(doc.document, dict)
        else empty_document(1, parent.problem_id)
    )
    nodes = list(document.get("visual_nodes") or [])
    number = _next_visual_number(nodes)
    now = timezone.now()
    changed: list[OcrProposal] = []
    for decision in decisions:
        proposal = proposals[decision.proposal_id]
        if decision.action == "drop":
            proposal.status = OcrProposal.Status.DROPPED
            proposal.final_bbox_1000, proposal.final_text, proposal.visual_id = None, "", ""
        elif decision.action in ("accept", "edit"):
            box = proposal.bbox_1000 if decision.bbox_1000 is None else _checked_box(decision.bbox_1000)
            text = proposal.text if decision.text is None else _checked_text(decision.text)
            if decision.action == "accept" and (decision.bbox_1000 is not None or decision.text is not None):
                raise ApplicationError(
                    "An accept keeps the proposal as it is; send an edit to change its box or text.",
                    code="ocr_decision_invalid",
                )
            kept_as_proposed = box == proposal.bbox_1000 and text == proposal.text
            proposal.status = OcrProposal.Status.ACCEPTED if kept_as_proposed else OcrProposal.Status.EDITED
            proposal.visual_id = f"v{number:03d}"
            number += 1
            proposal.final_bbox_1000, proposal.final_text = box, text
            nodes.append(_visual_node(proposal.visual_id, proposal.image.image_id, box, text))
        else:
            raise ApplicationError(f"Unknown action {decision.action!r}.", code="ocr_decision_invalid")
        proposal.decided_by = _user(actor)
        proposal.decided_at = now
        changed.append(proposal)

    kept = [p for p in changed if p.status != OcrProposal.Status.DROPPED]
    if kept or doc is not None:
        # With only drops the unchanged document is saved: the version is still checked, nothing is written.
        document["visual_nodes"] = nodes
        doc = pass_document_save(
            parent=parent,
            pass_no=OCR_PASS,
            document=document,
            actor=actor,
            expected_version=expected_version,
            note=f"OCR: accepted {', '.join(p.visual_id for p in kept)}" if kept else "",
        )
    elif expected_version not in (None, 0):
        from physalign_site.errors import ConflictError

        raise ConflictError(
            "This pass document does not exist (any more); reload it.",
            code="version_conflict",
            extra={"current_version": 0, "document_sha256": None},
        )
    OcrProposal.objects.bulk_update(
        changed, ["status", "final_bbox_1000", "final_text", "visual_id", "decided_by", "decided_at"]
    )
    event_record(
        actor=actor,
        verb="ocr_proposals.decide",
        obj=parent,
        after={
            "pass_version": doc.version if doc else 0,
            "decisions": [
                {"proposal": p.pk, "status": p.status, "visual_id": p.visual_id, "text": p.final_text}
                for p in changed
            ],
        },
    )
    return OcrDecided(doc=doc, proposals=changed)
