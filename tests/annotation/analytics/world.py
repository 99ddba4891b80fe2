"""A small annotation history with known timestamps, written the way the services write it (audit events,
source reviews, drafts, OCR proposals), and its hand-checked figures.

Copy ``k`` of the world (``build(copies=n)``) has its own users, sources and problems, so n copies hold exactly
n times the rows; the figures of copy 0 are the ones written out in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from unittest import mock

from annotation.models import LLMDraft, OcrProposal, OcrRun, PassDocument, RecordComment, SourceReview
from audit.services import event_record
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

DAY = date(2026, 11, 10)
T0 = datetime(2026, 11, 10, 9, 0, tzinfo=UTC)
FINDING = {
    "code": "PHYS_UNIT_DIMENSION",
    "record_id": "q001",
    "path": "quantities[0].unit",
    "rule": "force",
    "severity": "warning",
    "message": "A force is given in J.",
}
REJECTION_NOTE = "-ve sign on the normal force; =fix the unit"


def at(moment: datetime, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` as if the clock said ``moment`` (``auto_now_add`` fields and the audit event's ``at``)."""
    with mock.patch("django.utils.timezone.now", return_value=moment):
        return fn(*args, **kwargs)


def minutes(m: float) -> datetime:
    return T0 + timedelta(minutes=m)


@dataclass
class Copy:
    alice: Any
    bob: Any
    rita: Any
    d1: PassDocument  # OpenStax-k / mechanics, pass 1, 2 physics findings
    d2: PassDocument  # OpenStax-k / mechanics, pass 3, never checked
    d3: PassDocument  # Generated-k / no domain, pass 1, checked: no finding


def _save(actor: Any, doc: PassDocument, moment: datetime) -> None:
    at(moment, event_record, actor=actor, verb="pass_document.save", obj=doc, after={"coalesced": True})


def _submit(actor: Any, doc: PassDocument, moment: datetime) -> None:
    at(moment, event_record, actor=actor, verb="pass_document.submit", obj=doc)


def _draft(parent: Any, pass_no: int) -> LLMDraft:
    return LLMDraft.objects.create(
        parent=parent, pass_no=pass_no, model_label="scripted", prompt_version="v1"
    )


def _decide_draft(actor: Any, draft: LLMDraft, moment: datetime, acceptance: dict | None) -> None:
    draft.status = LLMDraft.Status.DISCARDED if acceptance is None else LLMDraft.Status.ACCEPTED
    draft.acceptance = acceptance or {}
    draft.save(update_fields=["status", "acceptance"])
    verb = "llm_draft.discard" if acceptance is None else "llm_draft.accept"
    at(moment, event_record, actor=actor, verb=verb, obj=draft, after=acceptance)


def _proposal(run: OcrRun, image: Any, user: Any, status: str, moment: datetime | None) -> OcrProposal:
    return OcrProposal.objects.create(
        run=run,
        parent=image.parent,
        image=image,
        bbox_1000=[10, 10, 50, 40],
        text="5 m",
        status=status,
        decided_by=user if moment else None,
        decided_at=moment,
    )


def build_copy(django_user_model: Any, k: int) -> Copy:
    alice = make_user(django_user_model, f"alice{k}", "annotator")
    bob = make_user(django_user_model, f"bob{k}", "annotator")
    rita = make_user(django_user_model, f"rita{k}", "source_reviewer")
    p1 = ParentProblemFactory(source=SourceFactory(name=f"OpenStax-{k}"), domain="mechanics")
    p2 = ParentProblemFactory(source=SourceFactory(name=f"Generated-{k}"), domain="")
    d1 = PassDocumentFactory(
        parent=p1,
        pass_no=1,
        physics_check={"rules_version": "2026.1", "findings": [FINDING, {**FINDING, "record_id": "q002"}]},
    )
    d2 = PassDocumentFactory(parent=p1, pass_no=3)
    d3 = PassDocumentFactory(parent=p2, pass_no=1, physics_check={"rules_version": "2026.1", "findings": []})

    # alice: D1 at 0, 2, 6, 20 (a 14-minute break), 21.5 minutes; then D2 at 24.5 (3 minutes after, across documents)
    for m in (0, 2, 6, 20, 21.5):
        _save(alice, d1, minutes(m))
    _save(alice, d2, minutes(24.5))
    _submit(alice, d1, minutes(22))
    _submit(alice, d2, minutes(25))
    # bob: D3 at 60, 65 (exactly 5 minutes: counts), 70 min 1 s (5 min 1 s: a break)
    for m in (60, 65, 70 + 1 / 60):
        _save(bob, d3, minutes(m))
    _submit(bob, d3, minutes(72))
    # after the day: two saves of alice on D1 (4 minutes apart), only in "all time"
    _save(alice, d1, datetime(2026, 11, 11, 0, 0, tzinfo=UTC))
    _save(alice, d1, datetime(2026, 11, 11, 0, 4, tzinfo=UTC))

    # rita rejects D1 (submitted by alice) with a note and one record comment
    review = at(
        minutes(40),
        SourceReview.objects.create,
        pass_document=d1,
        reviewer=rita,
        decision="rejected",
        note=REJECTION_NOTE,
        document=d1.document,
        document_sha256=d1.document_sha256,
        version=d1.version,
    )
    RecordComment.objects.create(
        review=review, collection="quantities", record_id="q001", text="5 m is a length"
    )
    at(
        minutes(41),
        SourceReview.objects.create,
        pass_document=d2,
        reviewer=rita,
        decision="approved",
        note="",
        document=d2.document,
        document_sha256=d2.document_sha256,
        version=d2.version,
    )

    # drafts: alice accepts one untouched (pass 1) and one edited (pass 3); bob discards one (pass 1)
    _decide_draft(alice, _draft(p1, 1), minutes(1), {"added": 0, "removed": 0, "changed": 0, "kept": 3})
    _decide_draft(alice, _draft(p1, 3), minutes(23), {"added": 1, "removed": 0, "changed": 2, "kept": 1})
    _decide_draft(bob, _draft(p2, 1), minutes(61), None)
    _draft(p2, 1)  # ready, never decided: not counted

    # OCR: alice accepts 2, edits 1, drops 1 on P1; bob drops 1 on P2, and accepted 1 the day before
    run = OcrRun.objects.create(parent=p1, status=OcrRun.Status.DONE)
    img1, img2 = (
        ProblemImageFactory(parent=p1, image_id="img_0", ordinal=0),
        ProblemImageFactory(parent=p2, image_id="img_0", ordinal=0),
    )
    for status in ("accepted", "accepted", "edited", "dropped"):
        _proposal(run, img1, alice, status, minutes(3))
    _proposal(run, img2, bob, "dropped", minutes(62))
    _proposal(run, img2, bob, "accepted", datetime(2026, 11, 9, 12, 0, tzinfo=UTC))
    _proposal(run, img1, None, "proposed", None)
    return Copy(alice, bob, rita, d1, d2, d3)


def build(django_user_model: Any, copies: int = 1) -> list[Copy]:
    return [build_copy(django_user_model, k) for k in range(copies)]
