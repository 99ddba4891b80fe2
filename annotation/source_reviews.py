"""The record of source reviews: each decision kept with the document it saw and its per-record comments
(``SourceReview``, ``RecordComment``), what changed since the last review, and the comments an annotator works
from. ``services.pass_document_approve`` / ``pass_document_reject`` record through :func:`source_review_record`
inside their transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, Exists, ExpressionWrapper, F, OuterRef, Q, QuerySet, Subquery

from physalign_site.errors import ApplicationError

from .double.blind import hidden_problem_ids
from .models import Assignment, PassDocument, PassDocumentVersion, RecordComment, SourceReview
from .permissions import is_self_review
from .record_comments import MAX_COMMENT, RecordRef, ReviewChanges, changes_since, parse_record_key

MAX_COMMENTS = 100


@dataclass(frozen=True)
class RecordCommentIn:
    record: str  # <collection>:<id>
    text: str


def comments_checked(document: Any, comments: list[RecordCommentIn]) -> list[tuple[RecordRef, str]]:
    """The comments, each bound to a record the reviewed document has; a refusal names the first that is not
    (unknown record, empty or too long text)."""
    if len(comments) > MAX_COMMENTS:
        raise ApplicationError(
            f"At most {MAX_COMMENTS} record comments per review.", code="too_many_comments"
        )
    checked = []
    for comment in comments:
        ref = parse_record_key(comment.record, document)
        if ref is None:
            raise ApplicationError(
                f"The document has no record {comment.record!r} to comment on (use <collection>:<id>, "
                "for example visual_nodes:v001).",
                code="unknown_record",
                extra={"record": comment.record},
            )
        text = (comment.text or "").strip()
        if not text:
            raise ApplicationError(f"The comment on {ref.key} is empty.", code="comment_empty")
        if len(text) > MAX_COMMENT:
            raise ApplicationError(
                f"The comment on {ref.key} is longer than {MAX_COMMENT} characters.", code="comment_too_long"
            )
        checked.append((ref, text))
    return checked


def pass_annotator_ids(doc: PassDocument) -> frozenset[int]:
    """Everyone who annotated a pass document (so may not review it): its last editor, whoever saved a version
    of it (``PassDocumentVersion.saved_by``; coalesced autosaves are one author's) and its problem's assigned
    annotator. One query."""
    savers = PassDocumentVersion.objects.filter(pass_document=doc).values("saved_by_id")
    assigned = Assignment.objects.filter(parent_id=doc.parent_id, role=Assignment.Role.ANNOTATOR).values(
        "user_id"
    )
    ids: set[int] = set(
        get_user_model().objects.filter(Q(pk__in=savers) | Q(pk__in=assigned)).values_list("pk", flat=True)
    )
    if doc.updated_by_id is not None:
        ids.add(doc.updated_by_id)
    return frozenset(ids)


def require_not_self_review(*, doc: PassDocument, actor: Any, decision: str) -> None:
    """Refuse (403, code ``self_review``) a source review by someone who annotated the pass (admins excepted,
    ``permissions.is_self_review``); ``decision`` is the verb the message names (approve / reject)."""
    if is_self_review(actor, last_editor_id=doc.updated_by_id, annotator_ids=pass_annotator_ids(doc)):
        raise ApplicationError(
            f"You cannot {decision} a pass you annotated (you edited it, saved a version of it or are its "
            "problem's assigned annotator); ask another reviewer.",
            code="self_review",
            status=403,
        )


def annotated_by(reviewer: Any) -> Q:
    """The ``PassDocument`` condition "``reviewer`` annotated it" of :func:`pass_annotator_ids`, in SQL."""
    saved = PassDocumentVersion.objects.filter(pass_document=OuterRef("pk"), saved_by=reviewer)
    assigned = Assignment.objects.filter(
        parent=OuterRef("parent_id"), role=Assignment.Role.ANNOTATOR, user=reviewer
    )
    return Q(updated_by=reviewer) | Q(Exists(saved)) | Q(Exists(assigned))


def source_queue_for(*, queue: QuerySet[PassDocument], reviewer: Any) -> QuerySet[PassDocument]:
    """The source review queue as ``reviewer`` takes it: the passes of problems assigned to them first (by due
    date, none last), then the rest in the queue's own order (oldest first). Each row says whether it is
    ``assigned_to_me``, to whom its problem's review is assigned (``assigned_reviewer``, '' or None: nobody)
    and whether the reviewer annotated it (``annotated_by_me``: then another reviewer must decide it). A problem
    the reviewer annotates a second time is not in it (``annotation.double.blind``)."""
    hidden = hidden_problem_ids(reviewer)
    if hidden:
        queue = queue.exclude(parent__problem_id__in=hidden)
    reviews = Assignment.objects.filter(parent=OuterRef("parent_id"), role=Assignment.Role.SOURCE_REVIEWER)
    mine = reviews.filter(user=reviewer)
    return queue.annotate(
        assigned_to_me=Exists(mine),
        assignment_due=Subquery(mine.values("due_date")[:1]),
        assigned_reviewer=Subquery(reviews.values("user__username")[:1]),
        annotated_by_me=ExpressionWrapper(annotated_by(reviewer), output_field=BooleanField()),
    ).order_by(F("assigned_to_me").desc(), F("assignment_due").asc(nulls_last=True), "updated_at", "pk")


def source_review_next_for(*, queue: QuerySet[PassDocument], reviewer: Any) -> PassDocument | None:
    """The next pass ``reviewer`` may decide in that queue: assigned ones first (:func:`source_queue_for`),
    never one they annotated."""
    return source_queue_for(queue=queue, reviewer=reviewer).exclude(annotated_by(reviewer)).first()


def source_review_record(
    *, doc: PassDocument, actor: Any, decision: str, note: str, comments: list[tuple[RecordRef, str]]
) -> SourceReview:
    review = SourceReview.objects.create(
        pass_document=doc,
        reviewer=actor if getattr(actor, "pk", None) else None,
        decision=decision,
        note=note,
        document=doc.document,
        document_sha256=doc.document_sha256,
        version=doc.version,
    )
    RecordComment.objects.bulk_create(
        RecordComment(review=review, collection=ref.collection, record_id=ref.record_id, text=text)
        for ref, text in comments
    )
    return review


def last_source_review(doc: PassDocument) -> SourceReview | None:
    return (
        SourceReview.objects.filter(pass_document=doc)
        .select_related("reviewer")
        .prefetch_related("comments")
        .first()
    )


@dataclass(frozen=True)
class SinceLastReview:
    """The last review of a pass and what changed after it (shown beside its note on the next review)."""

    review: SourceReview
    changes: ReviewChanges

    @property
    def changed(self) -> bool:
        return bool(self.changes.lines)


def since_last_review(doc: PassDocument) -> SinceLastReview | None:
    review = last_source_review(doc)
    if review is None:
        return None
    current = doc.document if review.document_sha256 != doc.document_sha256 else review.document
    return SinceLastReview(review, changes_since(review.document, current))


def record_comments_for_annotator(doc: PassDocument | None) -> dict[str, list[dict[str, str]]]:
    """The comments of the pass's last review, by record id, as the workspace shows them on each record (with
    the reviewer and the decision); none when there is no review."""
    review = last_source_review(doc) if doc is not None else None
    out: dict[str, list[dict[str, str]]] = {}
    if review is None:
        return out
    by = review.reviewer.get_username() if review.reviewer is not None else ""
    for comment in review.comments.all():
        out.setdefault(comment.record_id, []).append(
            {"collection": comment.collection, "text": comment.text, "by": by, "decision": review.decision}
        )
    return out
