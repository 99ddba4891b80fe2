"""Writes for sources and pass documents (Kit §2.3–§2.4): optimistic locking, hash-bound approval.

Every function here runs in one transaction, takes keyword arguments, records an audit event, and
refuses with ``ApplicationError`` / ``ConflictError`` without changing anything.
"""

from __future__ import annotations

from typing import Any, overload

from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.services import event_record
from kit.canonical import digest
from kit.passes.validator import (
    FORBIDDEN_KEY,
    PROBLEM_ID_MISMATCH,
    forbidden_key_issues,
)
from physalign_site.errors import ApplicationError, ConflictError

from .assignments.services import require_may_edit
from .history import pass_version_save
from .models import LLMDraft, ParentProblem, PassDocument, PassDocumentVersion, Source
from .permissions import can_manage_sources
from .physics.services import (
    blocking_issues,
    blocking_reason,
    physics_check_result,
    physics_issues,
)
from .selectors import (
    ANNOTATION_PASSES,
    earlier_pass_documents,
    parent_passes_approved,
    pass_validation_issues,
)
from .source_reviews import RecordCommentIn, comments_checked, require_not_self_review, source_review_record

SOLUTION_PASS = 5
PASS_NUMBERS = (1, 2, 3, 4, 5)
# Never stored: a document for another problem, or one carrying answer/solution keys (Kit §2.4).
HARD_CODES = frozenset({FORBIDDEN_KEY, PROBLEM_ID_MISMATCH})


@overload
def _pass_state(doc: PassDocument) -> dict[str, Any]: ...
@overload
def _pass_state(doc: None) -> None: ...
@overload
def _pass_state(doc: PassDocument | None) -> dict[str, Any] | None: ...
def _pass_state(doc: PassDocument | None) -> dict[str, Any] | None:
    if doc is None:
        return None
    return {"version": doc.version, "document_sha256": doc.document_sha256, "status": doc.status}


def _require_pass5_unlocked(parent: ParentProblem, pass_no: int) -> None:
    if pass_no == SOLUTION_PASS and not parent_passes_approved(parent=parent):
        raise ApplicationError(
            "Pass 5 opens only after passes 1–4 are approved (and the approvals are current).",
            code="pass5_locked",
            status=409,
        )


def _merge_issues(*groups: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str]] = set()
    merged: list[dict[str, str]] = []
    for issue in (i for group in groups for i in group):
        key = (str(issue.get("code", "")), str(issue.get("path", "")))
        if key not in seen:
            seen.add(key)
            merged.append(issue)
    return merged


def _own_forbidden(pass_no: int, document: Any) -> list[dict[str, str]]:
    # Our own scan guards passes 1–4 even without the validator; Pass 5 legitimately has final_answer.
    return forbidden_key_issues(pass_no, document) if pass_no in ANNOTATION_PASSES else []


def _hard_refusals(
    parent: ParentProblem, pass_no: int, document: Any, issues: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Problems that make a document unstorable (drafts with other issues are still saved)."""
    if not isinstance(document, dict):
        return [{"code": "TYPE_MISMATCH", "path": "", "message": "The document must be a JSON object."}]
    own: list[dict[str, str]] = []
    if document.get("problem_id") != parent.problem_id:
        own.append(
            {
                "code": PROBLEM_ID_MISMATCH,
                "path": "problem_id",
                "message": f"problem_id must be {parent.problem_id!r}.",
            }
        )
    own += _own_forbidden(pass_no, document)
    from_validator = [i for i in issues if str(i.get("code", "")).upper() in HARD_CODES]
    return _merge_issues(own, from_validator)


def _parent_mark_in_annotation(parent: ParentProblem) -> None:
    if parent.status in (ParentProblem.Status.NEW, ParentProblem.Status.ANNOTATED):
        parent.status = ParentProblem.Status.IN_ANNOTATION
        parent.save(update_fields=["status", "updated_at"])


def _parent_refresh_annotated(parent: ParentProblem) -> None:
    if parent.status != ParentProblem.Status.EXCLUDED and parent_passes_approved(parent=parent):
        if parent.status != ParentProblem.Status.ANNOTATED:
            parent.status = ParentProblem.Status.ANNOTATED
            parent.save(update_fields=["status", "updated_at"])


@transaction.atomic
def pass_document_save(
    *,
    parent: ParentProblem,
    pass_no: int,
    document: Any,
    actor: Any,
    expected_version: int | None,
    note: str = "",
    source_draft: LLMDraft | None = None,
) -> PassDocument:
    """Create or replace one pass document, guarded by the version the caller last saw.

    ``expected_version`` is None/0 only for a pass that does not exist yet. A stale version raises
    ``ConflictError`` (409) carrying the current version and hash; nothing changes. An unchanged
    document is a no-op. Validation issues other than hard refusals are stored-with and returned by
    ``pass_validation_issues``; they block ``pass_document_submit``, not saving. The physics checks' findings
    are recorded on the document (``physics_check``: the rule-set version and each finding with its severity);
    they never refuse a save.

    Every save moves the save counter (``version``, the If-Match); the history coalesces: a plain save by the
    author of the working version within the window joins it (``annotation.history.pass_version_save``), a save
    with a ``note`` (a revert) or a ``source_draft`` (an accepted LLM draft) always starts a version.
    """
    if pass_no not in PASS_NUMBERS:
        raise ApplicationError("Pass numbers run from 1 to 5.", code="pass_not_found", status=404)
    require_may_edit(actor, parent)
    parent = ParentProblem.objects.select_for_update().get(pk=parent.pk)
    doc = PassDocument.objects.select_for_update().filter(parent=parent, pass_no=pass_no).first()
    if doc is not None and _is_resent_save(doc, document, expected_version, actor):
        return doc
    _require_expected_version(doc, expected_version)
    _require_pass5_unlocked(parent, pass_no)

    earlier = earlier_pass_documents(
        parent=parent, pass_no=pass_no
    )  # read once: the validator and the physics
    issues = (
        pass_validation_issues(parent=parent, pass_no=pass_no, document=document, earlier=earlier)
        if isinstance(document, dict)
        else []
    )
    refusals = _hard_refusals(parent, pass_no, document, issues)
    if refusals:
        raise ApplicationError(
            "The document cannot be stored.", code="document_invalid", extra={"errors": refusals}
        )

    new_sha = digest(document)
    if doc is not None and doc.document_sha256 == new_sha:
        return doc

    physics = physics_issues(
        parent=parent,
        pass_no=pass_no,
        document=document,
        earlier=earlier if pass_no in ANNOTATION_PASSES else {},
    )
    physics_check = physics_check_result(physics) if pass_no in ANNOTATION_PASSES else {}
    before = _pass_state(doc)
    version_before, was_draft = (doc.version, doc.status == PassDocument.Status.DRAFT) if doc else (0, False)
    if doc is None:
        doc = _pass_document_create(
            parent, pass_no, document, new_sha, actor=actor, physics_check=physics_check
        )
    else:
        doc.document = document
        doc.document_sha256 = new_sha
        doc.version += 1
        # approved_sha256 stays: the old approval remains on record but is no longer fresh.
        doc.status = PassDocument.Status.DRAFT
        doc.updated_by = _user_or_none(actor)
        doc.physics_check = physics_check
        doc.save(
            update_fields=[
                "document",
                "document_sha256",
                "version",
                "status",
                "updated_by",
                "physics_check",
                "updated_at",
            ]
        )
    kept = pass_version_save(
        doc=doc,
        actor=actor,
        document_version_before=version_before,
        document_was_draft=was_draft,
        source_draft=source_draft,
        note=note,
    )

    if pass_no in ANNOTATION_PASSES:
        _parent_mark_in_annotation(parent)
    event_record(
        actor=actor,
        verb="pass_document.save",
        obj=doc,
        before=before,
        after={
            **_pass_state(doc),
            "validation_issue_count": len(issues),
            "physics_finding_count": len(physics),
            "history_version": kept.row.version,
            "coalesced": kept.coalesced,
        },
    )
    # what the pass API answers with (``pass_issues`` of the stored document): already computed, so the response
    # does not validate the document a second time
    doc.checked_issues = [*issues, *physics]
    return doc


def _is_resent_save(doc: PassDocument, document: Any, expected_version: int | None, actor: Any) -> bool:
    """A save whose reply never came (the worker killed after its commit, the connection dropped) is sent again
    with the If-Match it first carried, one version behind the one it made. When the stored document is exactly
    the one sent and its last save was this actor's, it is answered as stored, not as a conflict: the edit is
    stored once and the author carries on. Anything else that is behind is a conflict as before."""
    return (
        expected_version is not None
        and expected_version < doc.version
        and doc.updated_by_id is not None
        and doc.updated_by_id == getattr(actor, "pk", None)
        and doc.document_sha256 == digest(document)
    )


def _require_expected_version(doc: PassDocument | None, expected_version: int | None) -> None:
    """The optimistic lock: a missing document expects None/0, an existing one its current version."""
    if doc is None:
        if expected_version not in (None, 0):
            raise ConflictError(
                "This pass document does not exist (any more); reload it.",
                code="version_conflict",
                extra={"current_version": 0, "document_sha256": None},
            )
        return
    if expected_version is None:
        raise ApplicationError(
            "This pass document exists: send If-Match with the version you last loaded.",
            code="precondition_required",
            status=428,
            extra={"current_version": doc.version, "document_sha256": doc.document_sha256},
        )
    if expected_version != doc.version:
        raise ConflictError(
            "Someone saved this pass document after you loaded it; reload and merge your changes.",
            code="version_conflict",
            extra={
                "current_version": doc.version,
                "document_sha256": doc.document_sha256,
                "your_version": expected_version,
            },
        )


def _pass_document_create(
    parent: ParentProblem,
    pass_no: int,
    document: Any,
    document_sha256: str,
    *,
    actor: Any,
    physics_check: dict[str, Any],
) -> PassDocument:
    """A pass's first version, a draft; a concurrent first save that won the race is a version conflict."""
    doc = PassDocument(
        parent=parent,
        pass_no=pass_no,
        document=document,
        document_sha256=document_sha256,
        status=PassDocument.Status.DRAFT,
        version=1,
        updated_by=_user_or_none(actor),
        physics_check=physics_check,
    )
    try:
        with transaction.atomic():
            doc.save()
    except IntegrityError as exc:
        raise ConflictError(
            "Someone created this pass document at the same time; reload it.",
            code="version_conflict",
            extra={"current_version": None},
        ) from exc
    return doc


@transaction.atomic
def pass_document_revert(
    *, doc: PassDocument, version: int, actor: Any, expected_version: int | None
) -> PassDocument:
    """Save the content of an earlier version as a new version (history is never rewritten).

    Guarded like any save: ``expected_version`` must be the current version. Reverting to content
    equal to the current document changes nothing.
    """
    require_may_edit(actor, doc.parent)
    old = PassDocumentVersion.objects.filter(pass_document=doc, version=version).first()
    if old is None:
        raise ApplicationError(f"Version {version} does not exist.", code="version_not_found", status=404)
    saved = pass_document_save(
        parent=doc.parent,
        pass_no=doc.pass_no,
        document=old.document,
        actor=actor,
        expected_version=expected_version,
        note=f"reverted to v{version}",
    )
    if saved.version != doc.version:
        event_record(
            actor=actor,
            verb="pass_document.revert",
            obj=saved,
            before={"version": doc.version},
            after={"version": saved.version, "reverted_to": version},
        )
    return saved


@transaction.atomic
def pass_document_submit(*, doc: PassDocument, actor: Any) -> PassDocument:
    """Draft, rejected (or approved with a stale approval) → submitted, only when the validator, and the
    workspace's own checks, report no issue at all, and no physics rule an admin made blocking finds anything
    (physics warnings never refuse). The workspace shows a submitted (and an approved) document read-only; only a
    rejection reopens it for editing. Saving through the API would still store a new draft (un-submitting it)."""
    require_may_edit(actor, doc.parent)
    doc = PassDocument.objects.select_for_update().select_related("parent").get(pk=doc.pk)
    _require_pass5_unlocked(doc.parent, doc.pass_no)
    if doc.status == PassDocument.Status.SUBMITTED:
        return doc
    if doc.status == PassDocument.Status.APPROVED and doc.approval_is_fresh:
        raise ApplicationError(
            "This document is already approved; edit it to start a new round.",
            code="already_approved",
            status=409,
        )
    issues = _merge_issues(
        pass_validation_issues(parent=doc.parent, pass_no=doc.pass_no, document=doc.document),
        _own_forbidden(doc.pass_no, doc.document),
    )
    blocking = (
        blocking_issues(
            physics_issues(
                parent=doc.parent,
                pass_no=doc.pass_no,
                document=doc.document,
                earlier=earlier_pass_documents(parent=doc.parent, pass_no=doc.pass_no),
            )
        )
        if doc.pass_no in ANNOTATION_PASSES
        else []
    )
    if issues:
        raise ApplicationError(
            "Fix the validation issues before submitting.",
            code="document_has_issues",
            extra={"errors": issues + blocking},
        )
    if blocking:
        # the reason names each finding: the workspace's banner and an API client show it as it is
        raise ApplicationError(blocking_reason(blocking), code="physics_blocking", extra={"errors": blocking})
    before = _pass_state(doc)
    doc.status = PassDocument.Status.SUBMITTED
    doc.save(update_fields=["status", "updated_at"])
    event_record(actor=actor, verb="pass_document.submit", obj=doc, before=before, after=_pass_state(doc))
    return doc


def _review_lock(
    doc: PassDocument, document_sha256: str, parent_content_sha256: str | None = None
) -> PassDocument:
    """Lock the document and its parent (whose content the decision is bound to) and check that both are what
    the reviewer saw. A submitted document can be reviewed, and so can an approved one whose approval went stale
    (its problem's content changed: nothing is left for the annotator to submit)."""
    ParentProblem.objects.select_for_update().filter(pk=doc.parent_id).first()
    doc = PassDocument.objects.select_for_update().select_related("parent").get(pk=doc.pk)
    if document_sha256 != doc.document_sha256:
        raise ConflictError(
            "The document changed after you reviewed it; review the current version.",
            code="document_changed",
            extra={"current_version": doc.version, "document_sha256": doc.document_sha256},
        )
    if parent_content_sha256 is not None and parent_content_sha256 != doc.parent.content_sha256:
        raise ConflictError(
            "The problem's statement, question, options or images changed after you reviewed it; "
            "review the current version.",
            code="parent_changed",
            extra={"parent_content_sha256": doc.parent.content_sha256},
        )
    stale_approval = doc.status == PassDocument.Status.APPROVED and not doc.approval_is_fresh
    if doc.status != PassDocument.Status.SUBMITTED and not stale_approval:
        raise ApplicationError(
            f"Only submitted documents (and stale approvals) can be reviewed (this one is {doc.status}).",
            code="not_submitted",
            status=409,
        )
    return doc


@transaction.atomic
def pass_document_approve(
    *,
    doc: PassDocument,
    actor: Any,
    document_sha256: str,
    note: str = "",
    parent_content_sha256: str | None = None,
    comments: list[RecordCommentIn] | None = None,
) -> PassDocument:
    """Approve the exact content the reviewer saw (Kit §2.3, DESIGN §5): the document's hash and the problem's
    content hash (``annotation.binding``); the approval goes stale on any change to either. A caller that
    knows which problem content the reviewer saw passes ``parent_content_sha256``; a different one is refused."""
    doc = _review_lock(doc, document_sha256, parent_content_sha256)
    checked = comments_checked(doc.document, comments or [])
    require_not_self_review(doc=doc, actor=actor, decision="approve")
    before = _pass_state(doc)
    doc.status = PassDocument.Status.APPROVED
    doc.approved_sha256 = doc.document_sha256
    doc.approved_parent_sha256 = doc.parent.content_sha256
    doc.approved_upstream_sha256 = ""  # bound by save() to the passes it builds on as they are now
    doc.approved_by = _user_or_none(actor)
    doc.approved_at = timezone.now()
    doc.approval_origin, doc.approval_provenance = PassDocument.ApprovalOrigin.REVIEW, ""
    doc.review_note = note
    doc.save(
        update_fields=[
            "status",
            "approved_sha256",
            "approved_parent_sha256",
            "approved_by",
            "approved_at",
            "approval_origin",
            "approval_provenance",
            "review_note",
            "updated_at",
        ]
    )
    source_review_record(doc=doc, actor=actor, decision="approved", note=note, comments=checked)
    event_record(
        actor=actor,
        verb="pass_document.approve",
        obj=doc,
        before=before,
        after={
            **_pass_state(doc),
            "approved_parent_sha256": doc.approved_parent_sha256,
            "note": note,
            "comments": {ref.key: text for ref, text in checked},
        },
    )
    if doc.pass_no in ANNOTATION_PASSES:
        _parent_refresh_annotated(ParentProblem.objects.select_for_update().get(pk=doc.parent_id))
    return doc


@transaction.atomic
def pass_document_reject(
    *,
    doc: PassDocument,
    actor: Any,
    document_sha256: str,
    note: str,
    comments: list[RecordCommentIn] | None = None,
) -> PassDocument:
    """Send a submitted document back to the annotator; the note says what to fix, and per-record comments
    (``source_reviews``) say where."""
    if not (note or "").strip():
        raise ApplicationError("A rejection needs a note saying what to fix.", code="note_required")
    doc = _review_lock(doc, document_sha256)
    checked = comments_checked(doc.document, comments or [])
    require_not_self_review(doc=doc, actor=actor, decision="reject")
    before = _pass_state(doc)
    doc.status = PassDocument.Status.REJECTED
    doc.review_note = note.strip()
    doc.save(update_fields=["status", "review_note", "updated_at"])
    source_review_record(doc=doc, actor=actor, decision="rejected", note=doc.review_note, comments=checked)
    event_record(
        actor=actor,
        verb="pass_document.reject",
        obj=doc,
        before=before,
        after={
            **_pass_state(doc),
            "note": doc.review_note,
            "comments": {ref.key: text for ref, text in checked},
        },
    )
    return doc


@transaction.atomic
def source_create(*, name: str, license: str = "", url: str = "", actor: Any) -> Source:
    name = (name or "").strip()
    if not name:
        raise ApplicationError("A source needs a name.", code="name_required")
    if Source.objects.filter(name=name).exists():
        raise ConflictError(f"A source named {name!r} already exists.", code="source_exists")
    source = Source.objects.create(name=name, license=license, url=url)
    event_record(
        actor=actor, verb="source.create", obj=source, after={"name": name, "license": license, "url": url}
    )
    return source


SOURCE_FIELDS = ("name", "license", "url")


@transaction.atomic
def source_update(
    *, source: Source, actor: Any, changes: dict[str, str], job_ref: dict[str, Any] | None = None
) -> Source:
    """Change a source's fields (name, licence, URL): admins only (``actor=None`` is the server's operator), every
    change in the audit log with its before and after. Unchanged values are left out; nothing changed, no event."""
    if actor is not None and not can_manage_sources(actor):
        raise ApplicationError(
            "Only an admin may change a source.", code="source_change_forbidden", status=403
        )
    unknown = sorted(set(changes) - set(SOURCE_FIELDS))
    if unknown:
        raise ApplicationError(f"Unknown source fields: {', '.join(unknown)}.", code="source_field_unknown")
    source = Source.objects.select_for_update().get(pk=source.pk)
    changed = {name: value for name, value in changes.items() if getattr(source, name) != value}
    if not changed:
        return source
    if "name" in changed:
        name = (changed["name"] or "").strip()
        if not name:
            raise ApplicationError("A source needs a name.", code="name_required")
        if Source.objects.filter(name=name).exclude(pk=source.pk).exists():
            raise ConflictError(f"A source named {name!r} already exists.", code="source_exists")
        changed["name"] = name
    before = {name: getattr(source, name) for name in changed}
    for name, value in changed.items():
        setattr(source, name, value)
    source.save(update_fields=list(changed))
    event_record(
        actor=actor, verb="source.update", obj=source, before=before, after={**changed, **(job_ref or {})}
    )
    return source


def _user_or_none(actor: Any) -> Any:
    return actor if getattr(actor, "is_authenticated", False) else None
