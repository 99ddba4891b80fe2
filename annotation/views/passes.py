"""A pass's pages: the annotation workspace, the source reviewer's page, history and revert."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve, reverse
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audit.selectors import event_list
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from ..assignments.services import edit_refusal
from ..models import ParentProblem, PassDocument, PassDocumentVersion, ProblemImage
from ..permissions import (
    can_edit_pass,
    can_open_pass_review,
    can_read_pass,
    can_review_pass_no,
)
from ..physics.services import is_physics_issue
from ..record_comments import document_records
from ..selectors import (
    SourceQueueFilters,
    next_problem_for_pass,
    pass_version_list,
    workspace_documents,
)
from ..services import pass_document_approve, pass_document_reject, pass_document_revert
from ..source_reviews import (
    RecordCommentIn,
    record_comments_for_annotator,
    since_last_review,
    source_review_next_for,
)
from ..workspace import PASS_TITLES
from ..workspace_diff import document_diff
from ..workspace_page import workspace_payload
from .problems import pass_cell
from .rendering import ALL_PASSES, ANNOTATION_PASSES

# Annotorious (vendored; the workspace canvas) sets style *attributes* on its SVG shapes. Only the
# workspace and review pages allow that, narrowly (style-src-attr); <style> elements and sheets stay 'self'.
# (the django-stubs plugin infers settings.SECURE_CSP as dict[str, object])
WORKSPACE_CSP: dict[str, Collection[str] | str] = (
    {**settings.SECURE_CSP, "style-src-attr": [CSP.UNSAFE_INLINE]}  # type: ignore[dict-item]
    if settings.SECURE_CSP
    else {}
)


def _workspace_parent(problem_id: str) -> ParentProblem:
    # Private columns are never loaded for the workspace (answer-blind, paper §3.2); Pass 5 reads
    # the solution separately and only when it is allowed.
    return get_object_or_404(
        ParentProblem.objects.select_related("source")
        .defer("answer", "solution", "raw_question", "meta", "segmentation")
        .prefetch_related(Prefetch("images", queryset=ProblemImage.objects.order_by("ordinal"))),
        problem_id=problem_id,
    )


def _suggestions_url(problem_id: str, pass_no: int) -> str:
    """The draft-review page lands with the drafting issue; link to it only once it resolves."""
    url = f"/problems/{problem_id}/passes/{pass_no}/drafts/"
    try:
        match = resolve(url)
    except Resolver404:
        return ""
    return "" if match.func is pass_workspace else url


@csp_override(WORKSPACE_CSP)
@login_required
@require_GET
@require(can_read_pass, kwargs=("pass_no",))
def pass_workspace(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    parent = _workspace_parent(problem_id)
    docs = workspace_documents(parent=parent)
    images = list(parent.images.all())
    locked = pass_no == 5 and not all(
        docs.get(n) is not None and docs[n].approval_is_fresh for n in ANNOTATION_PASSES
    )
    if locked:
        return TemplateResponse(
            request,
            "annotation/workspace_locked.html",
            {
                "problem": parent,
                "pass_no": pass_no,
                "passes": _pass_tabs(parent, docs),
                "nav_section": "problems",
            },
            status=409,
        )
    editable = can_edit_pass(request.user, pass_no)
    # strict assignment (annotation.assignments): whoever may not edit this problem's passes sees it read-only
    refusal = edit_refusal(request.user, parent) if editable else ""
    payload = workspace_payload(
        parent=parent,
        images=images,
        docs=docs,
        pass_no=pass_no,
        editable=editable and not refusal,
        image_url=lambda image: reverse("annotation:image_file", args=[parent.problem_id, image.image_id]),
        solution=_solution_text(parent) if pass_no == 5 else None,
        user=request.user,
    )
    payload["record_comments"] = record_comments_for_annotator(docs.get(pass_no))
    following = next_problem_for_pass(after=parent, pass_no=pass_no)
    # "Submit and next problem" goes on to the next problem whose same pass is still work to do
    payload["urls"]["next_problem"] = (
        reverse("annotation:pass_workspace", args=[following.problem_id, pass_no]) if following else ""
    )
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _pass_tabs(parent, docs),
        "payload": payload,
        "doc": docs.get(pass_no),
        "rejection": _rejection(docs.get(pass_no)),
        "record_comments": _comment_list(docs.get(pass_no), payload["record_comments"]),
        "next_pass": pass_no + 1 if pass_no < 4 else None,
        "suggestions_url": _suggestions_url(parent.problem_id, pass_no),
        "can_review": can_review_pass_no(request.user, pass_no),
        "edit_refusal": refusal,
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/workspace.html", context)


def _comment_list(
    doc: PassDocument | None, by_record: dict[str, list[dict[str, str]]]
) -> list[dict[str, Any]]:
    """The last review's record comments for the list at the top of the workspace, each with its record's
    label (the document as it is now; a record removed since keeps its id)."""
    labels = {ref.record_id: ref for ref in document_records(doc.document)} if doc is not None else {}
    rows = []
    for record_id, comments in by_record.items():
        ref = labels.get(record_id)
        for comment in comments:
            rows.append(
                {
                    **comment,
                    "record_id": record_id,
                    "noun": ref.noun if ref else "record",
                    "label": ref.label if ref else "",
                    "exists": ref is not None,
                }
            )
    return rows


REVIEW_VERBS = ("pass_document.reject", "pass_document.approve")


def _rejection(doc: PassDocument | None) -> dict[str, Any] | None:
    """The source reviewer's rejection the annotator is working on: its note, who rejected and when.

    Shown while the document is rejected, and still after the annotator's first edits (the document is a
    draft again, and the note is what they are fixing) as long as the last review decision was that
    rejection. A rejection imported from a Kit review file has its note but no account or time here.
    """
    if (
        doc is None
        or not doc.review_note
        or doc.status not in (PassDocument.Status.REJECTED, PassDocument.Status.DRAFT)
    ):
        return None
    decision = (
        event_list()
        .filter(object_type=PassDocument._meta.label_lower, object_id=str(doc.pk), verb__in=REVIEW_VERBS)
        .first()
    )
    if decision is not None and decision.verb == "pass_document.reject":
        note = (decision.after or {}).get("note") or doc.review_note
        by = decision.actor.get_username() if decision.actor is not None else ""
        return {
            "note": note,
            "by": by,
            "at": decision.at,
            "edited_since": doc.status == PassDocument.Status.DRAFT,
        }
    if doc.status == PassDocument.Status.REJECTED:
        return {"note": doc.review_note, "by": "", "at": None, "edited_since": False}
    return None  # a draft whose note belongs to an approval (edited afterwards), not a rejection


def _posted_comment_rows(request: HttpRequest) -> list[tuple[str, str]]:
    """The comment rows of the review form as posted (record key, text), blank rows left out."""
    rows = zip(request.POST.getlist("comment_record"), request.POST.getlist("comment_text"), strict=False)
    kept = [(record.strip(), text) for record, text in rows if record.strip() or text.strip()]
    return kept or [("", "")]


def _posted_comments(request: HttpRequest) -> list[RecordCommentIn]:
    """Per-record comments of the review form; a row with text but no record is refused by the service."""
    return [RecordCommentIn(record, text) for record, text in _posted_comment_rows(request) if record or text]


def _solution_text(parent: ParentProblem) -> str:
    # Pass 5 only: the single place outside admin pages where the solution leaves the server.
    return ParentProblem.objects.filter(pk=parent.pk).values_list("solution", flat=True).first() or ""


def _next_in_queue(request: HttpRequest) -> str:
    """Where "Approve and next" / "Reject and next" lead: the next pass of the queue the reviewer came from
    (its filters ride in the form), else back to that queue, which then says nothing is waiting."""
    filters = SourceQueueFilters.from_query(request.POST)
    query = f"?{urlencode(filters.as_query())}" if filters.as_query() else ""
    following = source_review_next_for(queue=filters.queue(), reviewer=request.user)
    if following is None:
        messages.success(request, "That was the last pass waiting in this queue.")
        return reverse("annotation:source_queue") + query
    return reverse("annotation:pass_review", args=[following.parent.problem_id, following.pass_no]) + query


def _pass_tabs(parent: ParentProblem, docs: dict[int, PassDocument]) -> list[dict[str, Any]]:
    unlocked = all(docs.get(n) is not None and docs[n].approval_is_fresh for n in ANNOTATION_PASSES)
    tabs = []
    for n in ALL_PASSES:
        cell = pass_cell(n, docs.get(n))
        tabs.append(
            {
                "no": n,
                "title": PASS_TITLES[n],
                "state": cell.state,
                "label": cell.label,
                "locked": n == 5 and not unlocked,
            }
        )
    return tabs


@csp_override(WORKSPACE_CSP)
@login_required
@require_http_methods(["GET", "POST"])
@require(can_open_pass_review, kwargs=("pass_no",))
def pass_review(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    """Source review: the document drawn over the diagram and its records; approve or reject."""
    parent = _workspace_parent(problem_id)
    docs = workspace_documents(parent=parent)
    doc = docs.get(pass_no)
    if doc is None:
        raise Http404("This pass has no document yet.")
    if pass_no == 5 and not all(
        docs.get(n) is not None and docs[n].approval_is_fresh for n in ANNOTATION_PASSES
    ):
        raise Http404("Pass 5 is locked.")
    error = ""
    status = 200
    if request.method == "POST":
        if not can_review_pass_no(request.user, pass_no):  # editors see the page; only reviewers decide
            raise PermissionDenied
        decision, _, then = request.POST.get("decision", "").partition(
            "_"
        )  # "approve_next": approve, then next
        sha = request.POST.get("document_sha256", "")
        parent_sha = request.POST.get("parent_content_sha256") or None
        note = request.POST.get("note", "")
        comments = _posted_comments(request)
        try:
            if decision == "approve":
                pass_document_approve(
                    doc=doc,
                    actor=request.user,
                    document_sha256=sha,
                    parent_content_sha256=parent_sha,
                    note=note,
                    comments=comments,
                )
            elif decision == "reject":
                pass_document_reject(
                    doc=doc, actor=request.user, document_sha256=sha, note=note, comments=comments
                )
            else:
                raise ApplicationError("Choose approve or reject.", code="decision_required")
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
        else:
            if then == "next":
                return redirect(_next_in_queue(request))
            return redirect("annotation:pass_review", problem_id=parent.problem_id, pass_no=pass_no)
    images = list(parent.images.all())
    payload = workspace_payload(
        parent=parent,
        images=images,
        docs=docs,
        pass_no=pass_no,
        editable=False,
        image_url=lambda image: reverse("annotation:image_file", args=[parent.problem_id, image.image_id]),
        solution=_solution_text(parent) if pass_no == 5 else None,
        user=request.user,
    )
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _pass_tabs(parent, docs),
        "doc": doc,
        "payload": payload,
        # the validator's issues (they keep approval disabled); the physics findings (each with its severity) are
        # the reviewer's to judge: a blocking rule refuses submit, never a reviewer's decision
        "issues": [issue for issue in payload["issues"] if not is_physics_issue(issue)],
        "physics_findings": [issue for issue in payload["issues"] if is_physics_issue(issue)],
        "can_review": can_review_pass_no(request.user, pass_no),
        "since_last_review": since_last_review(doc),
        "records": document_records(doc.document),
        "comment_rows": _posted_comment_rows(request) if error else [("", "")],
        # the queue's filters this page was opened with: "… and next" takes the next pass of that queue
        "queue_filters": SourceQueueFilters.from_query(request.GET).as_query(),
        "error": error,
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/pass_review.html", context, status=status)


@login_required
@require_GET
@require(can_read_pass, kwargs=("pass_no",))
def pass_history(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    parent = _workspace_parent(problem_id)
    docs = workspace_documents(parent=parent)
    doc = docs.get(pass_no)
    if doc is None:
        raise Http404("This pass has no document yet.")
    versions = list(pass_version_list(doc=doc))
    numbers = [v.version for v in versions]

    def pick(name: str, default: int | None) -> int | None:
        wanted = int_param(request.GET.get(name), name=name)  # malformed → a 400 page that says so
        return wanted if wanted in numbers else default

    to_v = pick("to", numbers[0] if numbers else None)
    from_v = pick("from", next((n for n in numbers if to_v is not None and n < to_v), None))
    diff = None
    if to_v is not None:
        rows = {
            v.version: v.document
            for v in PassDocumentVersion.objects.filter(
                pass_document=doc, version__in=[x for x in (from_v, to_v) if x]
            )
        }
        diff = document_diff(rows.get(from_v) if from_v else None, rows.get(to_v))
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _pass_tabs(parent, docs),
        "doc": doc,
        "versions": versions,
        "from_v": from_v,
        "to_v": to_v,
        "diff": diff,
        "can_edit": can_edit_pass(request.user, pass_no),
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/pass_history.html", context)


@login_required
@require_POST
@require(can_edit_pass, kwargs=("pass_no",))
def pass_revert(request: HttpRequest, problem_id: str, pass_no: int, version: int) -> HttpResponse:
    parent = _workspace_parent(problem_id)
    doc = workspace_documents(parent=parent).get(pass_no)
    if doc is None:
        raise Http404("This pass has no document yet.")
    try:
        expected = int_param(request.POST.get("expected_version"), name="expected_version")
        pass_document_revert(doc=doc, version=version, actor=request.user, expected_version=expected)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Reverted to version {version}; the revert is saved as a new version.")
    return redirect("annotation:pass_history", problem_id=parent.problem_id, pass_no=pass_no)
