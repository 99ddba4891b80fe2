"""A Kit row's pass documents: read, validated, and written without forging approvals."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.utils import timezone

from audit.services import event_record
from kit.canonical import bytes_digest, digest
from kit.passes.validator import ImageRef, checked_issues, context_for, forbidden_key_issues

from .. import permissions
from ..history import pass_version_record
from ..models import ParentProblem, PassDocument
from .authority import ImportAuthority
from .kit_files import KitInputs, read_json_file
from .prepared import PreparedImage, PreparedParent, PreparedPass
from .report import PASS_NUMBERS, REQUIRED_PASSES, RowReport


def prepare_passes(
    row: RowReport, problem_id: str, review: dict[str, Any], *, inputs: KitInputs, authority: ImportAuthority
) -> list[PreparedPass]:
    stages = review.get("stages") or {}
    if not isinstance(stages, dict):
        row.error("REVIEW_STATE_INVALID", "stages must be an object.")
        stages = {}
    passes: list[PreparedPass] = []
    for pass_no in PASS_NUMBERS:
        path = inputs.workspace / "passes" / f"pass{pass_no}" / f"{problem_id}.json"
        stage = stages.get(f"pass{pass_no}")
        found, document = read_json_file(path, row, code="PASS_JSON_INVALID")
        if not found:
            if pass_no in REQUIRED_PASSES:
                row.warn(
                    "SOURCE_PASS_MISSING",
                    f"passes/pass{pass_no}/{problem_id}.json is missing.",
                    pass_no=pass_no,
                )
            if isinstance(stage, dict) and stage.get("status") == "approved":
                row.warn(
                    "SOURCE_REVIEW_WITHOUT_DOCUMENT",
                    f"Pass {pass_no} is approved in the review state but has no document.",
                    pass_no=pass_no,
                )
            continue
        if document is None:  # unreadable: already an error
            continue
        if not isinstance(document, dict):
            row.error(
                "PASS_NOT_OBJECT",
                f"passes/pass{pass_no}/{problem_id}.json must be a JSON object.",
                pass_no=pass_no,
            )
            continue
        if document.get("problem_id", problem_id) != problem_id:
            row.error(
                "PASS_PROBLEM_ID_MISMATCH",
                f"passes/pass{pass_no}/{problem_id}.json is for problem {document.get('problem_id')!r}.",
                pass_no=pass_no,
            )
            continue
        try:
            document_sha256 = digest(document)
        except (RecursionError, ValueError, UnicodeEncodeError):
            row.error(
                "PASS_JSON_INVALID",
                f"passes/pass{pass_no}/{problem_id}.json cannot be stored "
                "(too deeply nested, or text that is not valid Unicode).",
                pass_no=pass_no,
            )
            continue
        status, reviewer, note = _pass_status_from_stage(row, pass_no, stage, document_sha256, authority)
        passes.append(
            PreparedPass(
                pass_no=pass_no,
                document=document,
                document_sha256=document_sha256,
                status=status,
                reviewer=reviewer,
                review_note=note,
                file_sha256=bytes_digest(path.read_bytes()),
            )
        )
    return passes


def _pass_status_from_stage(
    row: RowReport, pass_no: int, stage: Any, document_sha256: str, authority: ImportAuthority
) -> tuple[str, str, str]:
    """Approved only when the stage's hash matches the document (Kit §2.3) and the uploader may review;
    otherwise submitted."""
    if not isinstance(stage, dict):
        return PassDocument.Status.SUBMITTED, "", ""
    status = stage.get("status")
    raw_note = stage.get("note")
    note = raw_note if isinstance(raw_note, str) else ""
    if status in ("approved", "rejected") and not authority.may_review:
        row.warn(
            "SOURCE_REVIEW_NOT_IMPORTED",
            f"The review state records Pass {pass_no} as {status}; only source reviewers and admins can import "
            "review decisions, so it is imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", ""
    if status == "rejected":
        return PassDocument.Status.REJECTED, "", note
    if status != "approved":
        return PassDocument.Status.SUBMITTED, "", note
    if stage.get("document_sha256") != document_sha256:
        row.warn(
            "SOURCE_REVIEW_HASH_STALE",
            f"Pass {pass_no} was approved for another version of the document "
            f"({stage.get('document_sha256')!r} ≠ {document_sha256}); imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", note
    reviewer = stage.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip() or len(reviewer) > 150:
        row.warn(
            "SOURCE_REVIEWER_MISSING",
            f"Pass {pass_no} is approved without a usable reviewer name; imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", note
    return PassDocument.Status.APPROVED, reviewer, note


def validate_passes(
    row: RowReport,
    passes: list[PreparedPass],
    *,
    problem_id: str,
    stem: str,
    query: str,
    images: list[PreparedImage],
) -> list[PreparedPass]:
    """Validate each document as the workspace does (same validator, same context of earlier passes).
    Issues are reported; a document with any issue is stored as a draft, never approved or submitted
    (the workspace refuses to submit it too)."""
    documents = {p.pass_no: p.document for p in passes}
    image_refs = [ImageRef(p.image_id, p.info.width, p.info.height) for p in images]
    checked = []
    for prepared in passes:
        context = context_for(
            prepared.pass_no,
            problem_id=problem_id,
            stem=stem,
            query=query,
            images=image_refs,
            earlier=documents,
        )
        issues = checked_issues(prepared.pass_no, prepared.document, context)
        if prepared.pass_no in REQUIRED_PASSES:
            issues += forbidden_key_issues(prepared.pass_no, prepared.document)
        for issue in issues:
            row.warn(issue["code"], issue["message"], pass_no=prepared.pass_no, path=issue.get("path", ""))
        if issues and prepared.status != PassDocument.Status.DRAFT:
            if prepared.status == PassDocument.Status.APPROVED:
                row.warn(
                    "SOURCE_REVIEW_DOCUMENT_INVALID",
                    f"Pass {prepared.pass_no} is approved in the review state but has validation issues; "
                    "it is imported as a draft and needs fixing and a new review.",
                    pass_no=prepared.pass_no,
                )
            prepared = replace(prepared, status=PassDocument.Status.DRAFT, reviewer="")
        checked.append(prepared)
    return checked


def _approval_fields(
    prepared: PreparedPass, authority: ImportAuthority, parent: ParentProblem
) -> dict[str, Any]:
    """The review fields an imported document is stored with. An approval is an *imported approval* by
    the uploader (who may review), bound to the document's hash and to the problem's content as stored now
    (``annotation.binding``); the file's reviewer name is provenance text, never an account."""
    if prepared.status != PassDocument.Status.APPROVED:
        return {"status": prepared.status, "review_note": prepared.review_note}
    return {
        "status": prepared.status,
        "review_note": prepared.review_note,
        "approved_sha256": prepared.document_sha256,
        "approved_parent_sha256": parent.content_sha256,
        "approved_upstream_sha256": "",  # bound by save() to the passes it builds on as stored
        "approved_by": authority.user,
        "approved_at": timezone.now(),
        "approval_origin": PassDocument.ApprovalOrigin.IMPORT,
        "approval_provenance": prepared.reviewer[:200],
    }


def _pass_event_state(doc: PassDocument) -> dict[str, Any]:
    return {
        "version": doc.version,
        "document_sha256": doc.document_sha256,
        "status": doc.status,
        "approved_sha256": doc.approved_sha256,
        "approved_parent_sha256": doc.approved_parent_sha256,
        "approval_origin": doc.approval_origin,
        "approval_provenance": doc.approval_provenance,
        "approved_by": doc.approved_by.get_username() if doc.approved_by is not None else None,
    }


def passes_write(
    parent: ParentProblem, prepared_parent: PreparedParent, *, actor: Any, authority: ImportAuthority
) -> bool:
    """Create or update the parent's pass documents. True if any changed.

    - A new document is stored with the status the check phase allowed (approved only from an uploader
      who may review, and only when valid).
    - The same content: only an allowed import may approve or reject it; anything else leaves it alone.
    - Other content: a new version (history kept). It never silently replaces an approved document: the
      new version is ``submitted`` (``draft`` when invalid) and the old approval stays on record, stale.
    - An approval on record for this very document that went stale because the problem's content changed is
      never renewed by a file (its review state is bound to the document only): it needs a review in the app.

    ``parent`` is the locked, current row (its content hash is what a new approval is bound to).
    """
    changed_any = False
    row = prepared_parent.report
    # Through the parent's manager, so each document's freshness is judged against this current row.
    existing = {doc.pass_no: doc for doc in parent.passes.select_for_update()}
    for prepared in prepared_parent.passes:
        doc = existing.get(prepared.pass_no)
        prepared = _unless_self_review(row, prepared, doc, authority)
        if doc is None:
            changed = _pass_import_new(row, parent, prepared, actor=actor, authority=authority)
        elif doc.document_sha256 == prepared.document_sha256:
            changed = _pass_import_review(row, parent, doc, prepared, actor=actor, authority=authority)
        else:
            changed = _pass_reimport(row, parent, doc, prepared, actor=actor, authority=authority)
        changed_any = changed_any or changed
    return changed_any


def _unless_self_review(
    row: RowReport, prepared: PreparedPass, doc: PassDocument | None, authority: ImportAuthority
) -> PreparedPass:
    """The pass as prepared, or as ``submitted`` without its review when the file's approval or rejection
    would be the uploader's review of a document they are the last editor of (this import writes it, unless
    the content is the stored one)."""
    same_content = doc is not None and doc.document_sha256 == prepared.document_sha256
    last_editor = (
        doc.updated_by_id if doc is not None and same_content else getattr(authority.user, "pk", None)
    )
    if (
        prepared.status in (PassDocument.Status.APPROVED, PassDocument.Status.REJECTED)
        and authority.user
        and permissions.is_self_review(authority.user, last_editor_id=last_editor)
    ):
        row.warn(
            "SOURCE_REVIEW_SELF_REVIEW",
            f"Pass {prepared.pass_no}: you would review a document you are the last editor of (this import "
            "writes it); it is imported as submitted for another reviewer.",
            pass_no=prepared.pass_no,
        )
        return replace(prepared, status=PassDocument.Status.SUBMITTED, reviewer="", review_note="")
    return prepared


def _pass_import_new(
    row: RowReport, parent: ParentProblem, prepared: PreparedPass, *, actor: Any, authority: ImportAuthority
) -> bool:
    """A pass the parent has no document for: stored with the status the check phase allowed."""
    doc = PassDocument.objects.create(
        parent=parent,
        pass_no=prepared.pass_no,
        document=prepared.document,
        document_sha256=prepared.document_sha256,
        updated_by=authority.user,
        **_approval_fields(prepared, authority, parent),
    )
    pass_version_record(doc=doc, actor=actor)
    event_record(
        actor=actor,
        verb="pass.imported",
        obj=doc,
        after={"problem_id": parent.problem_id, "pass_no": doc.pass_no, **_pass_event_state(doc)},
    )
    row.note_changed(f"pass{doc.pass_no}")
    return True


def _pass_import_review(
    row: RowReport,
    parent: ParentProblem,
    doc: PassDocument,
    prepared: PreparedPass,
    *,
    actor: Any,
    authority: ImportAuthority,
) -> bool:
    """The stored content again: only the file's approval or rejection may change its review, never a fresh
    approval, and never renewing one gone stale because the problem changed. True if the review changed."""
    before = _pass_event_state(doc)
    if doc.approval_is_fresh or prepared.status not in (
        PassDocument.Status.APPROVED,
        PassDocument.Status.REJECTED,
    ):
        return False
    if prepared.status == PassDocument.Status.APPROVED and _stale_by_problem(doc):
        row.warn(
            "SOURCE_REVIEW_CONTENT_CHANGED",
            f"Pass {prepared.pass_no} was approved on an earlier version of the problem's statement, "
            "question, options or images; the file's approval is not imported (it is bound to the "
            "document only), so the approval stays stale until a source reviewer renews it.",
            pass_no=prepared.pass_no,
        )
        return False
    if doc.status == prepared.status and doc.review_note == prepared.review_note:
        return False
    for name, value in _approval_fields(prepared, authority, parent).items():
        setattr(doc, name, value)
    doc.save()
    event_record(
        actor=actor, verb="pass.review_imported", obj=doc, before=before, after=_pass_event_state(doc)
    )
    row.note_changed(f"pass{doc.pass_no}.review")
    return True


def _pass_reimport(
    row: RowReport,
    parent: ParentProblem,
    doc: PassDocument,
    prepared: PreparedPass,
    *,
    actor: Any,
    authority: ImportAuthority,
) -> bool:
    """Other content: a new version, history kept. An approved document's approval stays on record, stale,
    and the new version is submitted (draft when invalid) for review."""
    before = _pass_event_state(doc)
    was_approved = doc.status == PassDocument.Status.APPROVED
    doc.document, doc.document_sha256 = prepared.document, prepared.document_sha256
    if was_approved:
        row.warn(
            "APPROVED_DOCUMENT_REPLACED",
            f"Pass {prepared.pass_no} was approved; the imported document differs, so it is stored as a new "
            "version for review and the approval is stale.",
            pass_no=prepared.pass_no,
        )
        # approved_sha256/approved_by stay: the old approval remains on record but is no longer fresh
        doc.status = (
            PassDocument.Status.DRAFT
            if prepared.status == PassDocument.Status.DRAFT
            else PassDocument.Status.SUBMITTED
        )
        doc.review_note = ""
    else:
        for name, value in _approval_fields(prepared, authority, parent).items():
            setattr(doc, name, value)
    doc.version += 1
    doc.updated_by = authority.user
    doc.save()
    pass_version_record(doc=doc, actor=actor)
    event_record(actor=actor, verb="pass.reimported", obj=doc, before=before, after=_pass_event_state(doc))
    row.note_changed(f"pass{doc.pass_no}")
    return True


def _stale_by_problem(doc: PassDocument) -> bool:
    """Approved for this very document, and stale only because the problem's content changed since."""
    return (
        doc.status == PassDocument.Status.APPROVED
        and doc.approved_sha256 == doc.document_sha256
        and "problem" in doc.approval_stale_reasons
    )
