"""Server-rendered annotation pages: problem list and detail, image files, imports (htmx)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve, reverse
from django.utils.cache import patch_vary_headers
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import push_url

from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from .forms import ImportUploadForm, ProblemFilterForm
from .importers import import_job_create
from .models import ImportJob, ParentProblem, PassDocument, PassDocumentVersion, ProblemImage
from .permissions import (
    can_edit_pass,
    can_import,
    can_open_pass_review,
    can_read_pass,
    can_review_pass_no,
    can_view_private_fields,
    can_view_problems,
)
from .selectors import (
    parent_detail_queryset,
    parent_facets,
    parent_list,
    pass_version_list,
    workspace_documents,
)
from .services import pass_document_approve, pass_document_reject, pass_document_revert
from .workspace import PASS_TITLES
from .workspace_diff import document_diff
from .workspace_page import workspace_payload

PROBLEMS_PER_PAGE = 50
RECENT_IMPORTS = 20
ANNOTATION_PASSES = (1, 2, 3, 4)
ALL_PASSES = (1, 2, 3, 4, 5)


def _is_partial_request(request: HttpRequest) -> bool:
    """An htmx swap wants the fragment; a history restore (cache miss) needs the full page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _render(request: HttpRequest, template: str, partial: str, context: dict[str, Any]) -> TemplateResponse:
    name = f"{template}#{partial}" if _is_partial_request(request) else template
    response = TemplateResponse(request, name, context)
    # The same URL answers with a fragment or a page: caches must keep them apart.
    patch_vary_headers(response, ("HX-Request",))
    return response


# ---------------------------------------------------------------- problems


@dataclass(frozen=True)
class PassCell:
    pass_no: int
    state: str  # missing | draft | submitted | approved | stale | rejected
    label: str


@dataclass
class ProblemRow:
    problem: ParentProblem
    passes: list[PassCell] = field(default_factory=list)

    @property
    def approved_count(self) -> int:
        return sum(1 for cell in self.passes if cell.state == "approved")


def _pass_cell(pass_no: int, document: PassDocument | None) -> PassCell:
    if document is None:
        return PassCell(pass_no, "missing", f"Pass {pass_no}: not started")
    if document.status == PassDocument.Status.APPROVED:
        if document.approval_is_fresh:
            return PassCell(pass_no, "approved", f"Pass {pass_no}: approved")
        return PassCell(pass_no, "stale", f"Pass {pass_no}: approval stale (document changed)")
    return PassCell(pass_no, document.status, f"Pass {pass_no}: {document.get_status_display().lower()}")


def _problem_rows(problems: list[ParentProblem]) -> list[ProblemRow]:
    rows = []
    for problem in problems:
        by_pass = {document.pass_no: document for document in problem.passes.all()}
        rows.append(ProblemRow(problem, [_pass_cell(n, by_pass.get(n)) for n in ANNOTATION_PASSES]))
    return rows


@login_required
@require_GET
@require(can_view_problems)
def problem_list(request: HttpRequest) -> TemplateResponse:
    facets = parent_facets()
    form = ProblemFilterForm(request.GET or None, facets=facets)
    filters = form.filters()
    # Pass progress for the visible page in one extra query, whatever the page size.
    # Large and private columns are not needed for the table (and private ones never should be here).
    problems = (
        parent_list(**filters)
        .defer("raw_question", "answer", "solution", "segmentation", "meta", "options")
        .prefetch_related(
            Prefetch(
                "passes",
                queryset=PassDocument.objects.filter(pass_no__in=ANNOTATION_PASSES).only(
                    "id", "parent_id", "pass_no", "status", "document_sha256", "approved_sha256"
                ),
            )
        )
    )
    page = Paginator(problems, PROBLEMS_PER_PAGE).get_page(request.GET.get("page"))
    active = {
        key: value
        for key, value in (
            ("q", filters["search"]),
            ("source", filters["source"]),
            ("language", filters["language"]),
            ("domain", filters["domain"]),
            ("status", filters["status"]),
        )
        if value
    }
    context = {
        "form": form,
        "page": page,
        "rows": _problem_rows(list(page.object_list)),
        "active_filters": active,
        "filter_query": urlencode(active),
        "nav_section": "problems",
        "elided_pages": list(page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)),
    }
    response = _render(request, "annotation/problem_list.html", "results", context)
    if _is_partial_request(request):
        # Keep the address bar canonical: only the filters in use, and the page when not the first.
        query = {**active, **({"page": page.number} if page.number > 1 else {})}
        push_url(response, f"{request.path}?{urlencode(query)}" if query else request.path)
    return response


@login_required
@require_GET
@require(can_view_problems)
def problem_detail(request: HttpRequest, problem_id: str) -> TemplateResponse:
    problem = get_object_or_404(parent_detail_queryset(), problem_id=problem_id)
    by_pass = {document.pass_no: document for document in problem.passes.all()}
    passes = [(n, by_pass.get(n)) for n in ALL_PASSES]
    # Private fields leave the server only inside this dict, and only for admins (paper §3.2).
    private = (
        {"answer": problem.answer, "solution": problem.solution}
        if can_view_private_fields(request.user)
        else None
    )
    options = [option for option in (problem.options or []) if isinstance(option, dict)]
    context = {
        "problem": problem,
        "images": list(problem.images.all()),
        "passes": passes,
        "options": options,
        "private": private,
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/problem_detail.html", context)


@login_required
@require_GET
@require(can_view_problems)
def image_file(request: HttpRequest, problem_id: str, image_id: str) -> FileResponse:
    image = get_object_or_404(
        ProblemImage.objects.select_related("parent"), parent__problem_id=problem_id, image_id=image_id
    )
    try:
        handle = image.file.open("rb")
    except (FileNotFoundError, ValueError) as exc:
        raise Http404("The image file is missing from storage.") from exc
    response = FileResponse(handle, content_type=image.media_type)
    response["Content-Length"] = str(image.file.size)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = (
        f'inline; filename="{image.image_id}.{image.file.name.rsplit(".", 1)[-1]}"'
    )
    return response


# ---------------------------------------------------------------- imports


@dataclass(frozen=True)
class ReportMessage:
    code: str
    message: str


@dataclass(frozen=True)
class ReportRow:
    row: str
    problem_id: str
    outcome: str
    errors: list[ReportMessage]
    warnings: list[ReportMessage]


@dataclass(frozen=True)
class ReportView:
    status: str
    counts: list[tuple[str, Any]]
    rows: list[ReportRow]
    message: str


def _messages(value: Any) -> list[ReportMessage]:
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    out = []
    for item in value:
        if isinstance(item, dict):
            out.append(ReportMessage(str(item.get("code", "") or ""), str(item.get("message", "") or item)))
        else:
            out.append(ReportMessage("", str(item)))
    return out


def _report_view(report: Any) -> ReportView:
    """The importer's report, tolerant of missing or oddly shaped parts (it is stored JSON)."""
    if not isinstance(report, dict):
        report = {}
    counts = report.get("counts")
    count_items = (
        [(str(key).replace("_", " "), value) for key, value in counts.items()]
        if isinstance(counts, dict)
        else []
    )
    rows = []
    raw_rows = report.get("rows")
    for index, raw in enumerate(raw_rows if isinstance(raw_rows, list) else [], start=1):
        if not isinstance(raw, dict):
            continue
        rows.append(
            ReportRow(
                row=str(raw.get("row", index)),
                problem_id=str(raw.get("problem_id") or ""),
                outcome=str(raw.get("outcome") or ""),
                errors=_messages(raw.get("errors")),
                warnings=_messages(raw.get("warnings")),
            )
        )
    message = report.get("message") or report.get("error") or ""
    if isinstance(message, dict):
        message = message.get("message", "")
    return ReportView(
        status=str(report.get("status") or ""), counts=count_items, rows=rows, message=str(message)
    )


def _job_context(job: ImportJob) -> dict[str, Any]:
    running = job.status in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING)
    percent = round(100 * job.done / job.total) if job.total else 0
    return {
        "job": job,
        "running": running,
        "nav_section": "imports",
        "percent": min(percent, 100),
        "report": None if running else _report_view(job.report),
    }


@login_required
@require_http_methods(["GET", "POST"])
@require(can_import)
def import_list(request: HttpRequest) -> HttpResponse:
    form = ImportUploadForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                job = import_job_create(
                    kind=form.cleaned_data["kind"], upload=form.cleaned_data["file"], actor=request.user
                )
            except ApplicationError as exc:
                form.add_error("kind" if exc.code == "import_kind_invalid" else "file", exc.message)
            else:
                return redirect("annotation:import_detail", job_id=job.pk)
        status = 400
    jobs = ImportJob.objects.select_related("created_by").order_by("-created_at", "-id")[:RECENT_IMPORTS]
    return TemplateResponse(
        request,
        "annotation/import_list.html",
        {"form": form, "jobs": jobs, "nav_section": "imports"},
        status=status,
    )


@login_required
@require_GET
@require(can_import)
def import_detail(request: HttpRequest, job_id: int) -> TemplateResponse:
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), pk=job_id)
    return _render(request, "annotation/import_detail.html", "job", _job_context(job))


# ---------------------------------------------------------------- workspace


# Annotorious (vendored; the workspace canvas) sets style *attributes* on its SVG shapes. Only the
# workspace and review pages allow that, narrowly (style-src-attr); <style> elements and sheets stay 'self'.
WORKSPACE_CSP = {**settings.SECURE_CSP, "style-src-attr": [CSP.UNSAFE_INLINE]} if settings.SECURE_CSP else {}


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
    payload = workspace_payload(
        parent=parent,
        images=images,
        docs=docs,
        pass_no=pass_no,
        editable=can_edit_pass(request.user, pass_no),
        image_url=lambda image: reverse("annotation:image_file", args=[parent.problem_id, image.image_id]),
        solution=_solution_text(parent) if pass_no == 5 else None,
    )
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _pass_tabs(parent, docs),
        "payload": payload,
        "suggestions_url": _suggestions_url(parent.problem_id, pass_no),
        "can_review": can_review_pass_no(request.user, pass_no),
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/workspace.html", context)


def _solution_text(parent: ParentProblem) -> str:
    # Pass 5 only: the single place outside admin pages where the solution leaves the server.
    return ParentProblem.objects.filter(pk=parent.pk).values_list("solution", flat=True).first() or ""


def _pass_tabs(parent: ParentProblem, docs: dict[int, PassDocument]) -> list[dict[str, Any]]:
    unlocked = all(docs.get(n) is not None and docs[n].approval_is_fresh for n in ANNOTATION_PASSES)
    tabs = []
    for n in ALL_PASSES:
        cell = _pass_cell(n, docs.get(n))
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
        decision = request.POST.get("decision")
        sha = request.POST.get("document_sha256", "")
        note = request.POST.get("note", "")
        try:
            if decision == "approve":
                pass_document_approve(doc=doc, actor=request.user, document_sha256=sha, note=note)
            elif decision == "reject":
                pass_document_reject(doc=doc, actor=request.user, document_sha256=sha, note=note)
            else:
                raise ApplicationError("Choose approve or reject.", code="decision_required")
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
        else:
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
    )
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _pass_tabs(parent, docs),
        "doc": doc,
        "payload": payload,
        "issues": payload["issues"],
        "can_review": can_review_pass_no(request.user, pass_no),
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
