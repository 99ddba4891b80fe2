"""Applying a curation: the curated document (``merge.curated_document``) saved as a new version of the first
annotator's pass through the ordinary save, then submitted for source review when it validates; a ``Curation``
row and one audit event per choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError, ConflictError

from ..models import Curation, ParentProblem, PassDocument
from ..services import pass_document_save, pass_document_submit
from .merge import Choice, ChoiceError, MergeResult, curated_document, id_key_of, references_to
from .selectors import CurationSides, curation_sides

# Refusals of the submit that leave the curated document a draft (its issues are shown); any other is raised.
DRAFT_CODES = frozenset({"document_has_issues", "physics_blocking"})


@dataclass(frozen=True)
class CurationOutcome:
    curation: Curation
    doc: PassDocument
    result: MergeResult
    submitted: bool
    issues: list[dict[str, Any]]  # the validator's issues (and blocking physics findings) when left a draft


def _require_versions(sides: CurationSides, expected_version: int | None, second_version: int | None) -> None:
    first = sides.first
    if expected_version is None:
        raise ApplicationError(
            "Send the version of the first annotation you curated (If-Match).",
            code="precondition_required",
            status=428,
            extra={"current_version": first.version, "document_sha256": first.document_sha256},
        )
    if expected_version != first.version:
        raise ConflictError(
            "The first annotation was saved after you loaded it; reload and choose again.",
            code="version_conflict",
            extra={
                "current_version": first.version,
                "document_sha256": first.document_sha256,
                "your_version": expected_version,
            },
        )
    if second_version is not None and second_version != sides.second.version:
        raise ConflictError(
            "The second annotation was saved after you loaded it; reload and choose again.",
            code="second_version_conflict",
            extra={"current_second_version": sides.second.version, "your_second_version": second_version},
        )


def _require_later_passes_kept(sides: CurationSides, result: MergeResult) -> None:
    """A drop (or the renumbering after it) must not break what the first annotator's later passes refer to —
    the workspace refuses the same deletion."""
    own = {
        str(r.get(id_key_of(c, sides.pass_no)))
        for c in {choice.collection for choice in result.choices}
        for r in (sides.first.document.get(c) or [])
        if isinstance(r, dict)
    }
    pass2 = {
        str(r.get("id"))
        for r in (sides.first_earlier.get(2, {}).get("physical_nodes") or [])
        if isinstance(r, dict) and sides.pass_no == 3
    }
    moved = ({*result.dropped, *result.renamed} & own) - pass2
    hits = references_to(sides.first_later, moved)
    if hits:
        named = "; ".join(
            f"{ref} ({'dropped' if ref in result.dropped else 'renumbered to ' + result.renamed[ref]}) is used by "
            + ", ".join(where)
            for ref, where in hits.items()
        )
        raise ApplicationError(
            f"Later passes refer to records this curation drops or renumbers: {named}. Keep those records, or "
            "change the later passes first.",
            code="later_passes_refer",
            status=409,
            extra={"references": hits},
        )


def _state(doc: PassDocument) -> dict[str, Any]:
    return {"version": doc.version, "document_sha256": doc.document_sha256, "status": doc.status}


def _record_in(document: dict[str, Any], collection: str, record_id: str | None, id_key: str) -> Any:
    if record_id is None:
        return None
    rows = document.get(collection)
    if not isinstance(rows, list):
        return None
    return next((r for r in rows if isinstance(r, dict) and r.get(id_key) == record_id), None)


def _choice_events(sides: CurationSides, result: MergeResult, curation: Curation, actor: Any) -> None:
    """One ``curation.choice`` event per pair: the first's record before, the curated record after (None when
    the record is not in the curated document), with the second's record and the pair's score."""
    scores = {(p.collection, p.first_id, p.second_id): p.score for p in sides.pairs}
    for choice in result.choices:
        id_key = id_key_of(choice.collection, sides.pass_no)
        if choice.first_id is not None and not (choice.keep == "drop"):
            curated_id: str | None = result.final_id(choice.first_id)
        elif choice.second_id is not None and choice.second_id in result.added:
            curated_id = result.final_id(result.added[choice.second_id])
        else:
            curated_id = None
        event_record(
            actor=actor,
            verb="curation.choice",
            obj=curation,
            before={
                "collection": choice.collection,
                "first_id": choice.first_id,
                "record": _record_in(sides.first.document, choice.collection, choice.first_id, id_key),
            },
            after={
                "keep": choice.keep,
                "second_id": choice.second_id,
                "score": scores.get(choice.key),
                "second_record": _record_in(
                    sides.second.document, choice.collection, choice.second_id, id_key
                ),
                "curated_id": curated_id,
                "record": _record_in(result.document, choice.collection, curated_id, id_key),
            },
        )


@transaction.atomic
def curation_apply(
    *,
    parent: ParentProblem,
    pass_no: int,
    choices: list[Choice],
    curator: Any,
    expected_version: int | None,
    second_version: int | None = None,
) -> CurationOutcome:
    """Reconcile Pass ``pass_no`` of ``parent``: build the curated document from the current two annotations and
    ``choices`` (pairs left out take their default), save it as a new version of the first annotator's pass
    (``pass_document_save``, guarded by ``expected_version``: the first document's version the curator saw; a
    stale one is a 409 and nothing changes) and submit it for source review when the validator (and every
    blocking physics rule) passes — else it stays a draft and ``issues`` says why. An approved document whose
    curation changed nothing keeps its approval. Records a ``Curation`` and audits every choice
    (``curation.choice``) and the whole (``curation.apply``)."""
    sides = curation_sides(user=curator, parent=parent, pass_no=pass_no, lock=True)
    _require_versions(sides, expected_version, second_version)
    try:
        result = curated_document(
            pass_no,
            sides.first.document,
            sides.second.document,
            sides.pairs,
            choices,
            earlier_pairs=sides.earlier_pairs,
            first_earlier=sides.first_earlier,
            second_earlier=sides.second_earlier,
            texts=sides.texts,
        )
    except ChoiceError as exc:
        raise ApplicationError(str(exc), code="choice_invalid") from exc
    _require_later_passes_kept(sides, result)
    before = _state(sides.first)
    doc = pass_document_save(
        parent=parent,
        pass_no=pass_no,
        document=result.document,
        actor=curator,
        expected_version=expected_version,
        note=f"curated with the second annotation by {sides.second_annotation.annotator.get_username()}",
    )
    submitted, issues = False, []
    if doc.status != PassDocument.Status.APPROVED or not doc.approval_is_fresh:
        try:
            doc = pass_document_submit(doc=doc, actor=curator)
            submitted = True
        except ApplicationError as exc:
            if exc.code not in DRAFT_CODES:
                raise
            issues = list(exc.extra.get("errors", []))
    curation = Curation.objects.create(
        parent=parent,
        pass_no=pass_no,
        choices=[
            {"collection": c.collection, "first_id": c.first_id, "second_id": c.second_id, "keep": c.keep}
            for c in result.choices
        ],
        first_sha256=before["document_sha256"],
        second_sha256=sides.second.document_sha256,
        result_sha256=digest(result.document),
        curator=curator if getattr(curator, "is_authenticated", False) else None,
    )
    _choice_events(sides, result, curation, curator)
    event_record(
        actor=curator,
        verb="curation.apply",
        obj=curation,
        before={
            **before,
            "second_version": sides.second.version,
            "second_sha256": sides.second.document_sha256,
        },
        after={
            **_state(doc),
            "problem_id": parent.problem_id,
            "pass_no": pass_no,
            "submitted": submitted,
            "issue_count": len(issues),
            "taken": list(result.taken),
            "added": result.added,
            "dropped": list(result.dropped),
            "renamed": result.renamed,
            "unresolved": [u.__dict__ for u in result.unresolved],
        },
    )
    return CurationOutcome(curation=curation, doc=doc, result=result, submitted=submitted, issues=issues)
