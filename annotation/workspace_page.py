"""The one JSON payload a workspace page starts from (embedded with ``json_script``; no extra fetch).

Answer-blind by construction: the payload is built from the parent's public fields only, earlier
passes' documents (which may not carry answer keys, Kit §2.4), and — for Pass 5 alone — the solution
text passed in by the caller. It issues no queries of its own but one: which physics rules block, read only
when the document has a physics finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

from kit.passes.validator import (
    ID_PREFIXES,
    PASS_LAYOUTS,
    RECORD_SPECS,
    ImageRef,
    checked_workspace_issues,
    context_for,
)

from .models import ParentProblem, PassDocument, ProblemImage
from .physics.services import physics_issues
from .workspace import (
    ANNOTATION_PASSES,
    PASS_TITLES,
    consolidate_gobs,
    empty_document,
    kit_domain_for,
    later_references,
    vocabulary,
)

# The predicates the relation editor suggests (a datalist). The validator accepts any non-empty
# predicate, so this is a list of suggestions, not a Kit enum.
RELATION_PREDICATES = (
    "acts_on",
    "applied_at",
    "attached_to",
    "connected_to",
    "located_at",
    "part_of",
    "rests_on",
    "pivots_about",
    "points_along",
    "lever_arm_of",
    "angle_between",
)


def collection_id_prefixes() -> dict[str, str]:
    """The ID prefix of every record collection of a pass document (``visual_nodes`` → ``v``), from the
    validator's layouts, so the page numbers new records exactly as the validator checks them."""
    return {
        collection.key: ID_PREFIXES[kind]
        for layout in PASS_LAYOUTS.values()
        for collection in layout.collections
        if (kind := RECORD_SPECS[collection.record].id_kind) is not None
    }


def workspace_issues(
    *,
    parent: ParentProblem,
    images: list[ProblemImage],
    docs: dict[int, PassDocument],
    pass_no: int,
    document: Any,
) -> list[dict[str, str]]:
    """The validator's issues for ``document`` as Pass ``pass_no``, from data already loaded, with the
    workspace's own checks (stricter than the Kit; see ``kit.passes.validator.workspace_checks``)."""
    context = context_for(
        pass_no,
        problem_id=parent.problem_id,
        stem=parent.stem,
        query=parent.query,
        images=[ImageRef(image_id=i.image_id, width=i.width, height=i.height) for i in images],
        earlier={n: doc.document for n, doc in docs.items()},
    )
    return checked_workspace_issues(pass_no, document, context)


def workspace_physics_issues(
    *, parent: ParentProblem, docs: dict[int, PassDocument], pass_no: int, document: Any
) -> list[dict[str, Any]]:
    """The physics checks' findings for ``document`` as Pass ``pass_no``, each with its severity, from the
    documents already loaded (``annotation.physics.services.physics_issues``)."""
    return physics_issues(
        parent=parent,
        pass_no=pass_no,
        document=document,
        earlier={n: doc.document for n, doc in docs.items()},
    )


def _state(doc: PassDocument | None) -> dict[str, Any]:
    if doc is None:
        return {
            "exists": False,
            "version": 0,
            "history_version": 0,
            "status": "new",
            "document_sha256": "",
            "approval_is_fresh": False,
            "updated_by": "",
            "updated_at": "",
            "review_note": "",
            "approved_sha256": "",
        }
    return {
        "exists": True,
        "version": doc.version,  # the If-Match save counter
        "history_version": doc.history_version,  # the history page's number (autosaves coalesce)
        "status": doc.status,
        "document_sha256": doc.document_sha256,
        "approval_is_fresh": doc.approval_is_fresh,
        "approved_sha256": doc.approved_sha256,
        "updated_by": doc.updated_by.get_username() if doc.updated_by is not None else "",
        "updated_at": doc.updated_at.isoformat() if doc.updated_at else "",
        "review_note": doc.review_note,
    }


def workspace_payload(
    *,
    parent: ParentProblem,
    images: list[ProblemImage],
    docs: dict[int, PassDocument],
    pass_no: int,
    editable: bool,
    image_url: Callable[[ProblemImage], str],
    solution: str | None,
    user: Any,
) -> dict[str, Any]:
    doc = docs.get(pass_no)
    document = (
        doc.document if doc is not None else empty_document(pass_no, parent.problem_id, domain=parent.domain)
    )
    earlier = {f"pass{n}": docs[n].document for n in (1, 2, 3, 4) if n < pass_no and n in docs}
    consolidated = (
        consolidate_gobs(
            problem_id=parent.problem_id,
            pass1=earlier.get("pass1"),
            pass2=earlier.get("pass2"),
            pass3=earlier.get("pass3"),
            current=document if doc is not None else None,
            domain_hint=parent.domain,
        )
        if pass_no == 4
        else None
    )
    # An unstarted Pass 4 is what it will be built from (the page shows it consolidated from Passes 1–3): its
    # issues are that document's, not an empty one's.
    checked = consolidated if consolidated is not None and doc is None else document
    args = [parent.problem_id, pass_no]
    payload: dict[str, Any] = {
        # unsaved work kept on this device belongs to the user who made it (the storage key names them)
        "user": {"id": user.pk, "username": user.get_username()},
        "problem": {
            "problem_id": parent.problem_id,
            "language": parent.language,
            "stem": parent.stem,
            "query": parent.query,
            "options": [o for o in (parent.options or []) if isinstance(o, dict)],
            "domain": parent.domain,
            "kit_domain": kit_domain_for(parent.domain),
        },
        "images": [
            {"image_id": i.image_id, "url": image_url(i), "width": i.width, "height": i.height}
            for i in images
        ],
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "editable": editable,
        "state": _state(doc),
        "document": document,
        "earlier": earlier,
        # the validator's issues (they block submit), then the physics findings, each with its severity (a
        # warning never blocks; static/js/workspace/issues.js shows them as their own group)
        "issues": [
            *workspace_issues(parent=parent, images=images, docs=docs, pass_no=pass_no, document=checked),
            *workspace_physics_issues(parent=parent, docs=docs, pass_no=pass_no, document=checked),
        ],
        "vocab": vocabulary(),
        "id_prefixes": dict(ID_PREFIXES),
        "collection_id_prefixes": collection_id_prefixes(),
        "relation_predicates": list(RELATION_PREDICATES),
        "later_refs": later_references(
            pass_no=pass_no,
            later={n: docs[n].document for n in ANNOTATION_PASSES if n > pass_no and n in docs},
        ),
        "urls": {
            "api": reverse("annotation-api:pass-detail", args=args),
            "submit": reverse("annotation-api:pass-submit", args=args),
            "history": reverse("annotation:pass_history", args=args),
            "review": reverse("annotation:pass_review", args=args),
        },
    }
    if consolidated is not None:
        payload["consolidated"] = consolidated
    if pass_no == 5 and solution is not None:
        payload["solution"] = solution
    return payload
