"""The problem list (filters, pass states), a problem's page and its images."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import FileResponse, Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import push_url

from audit.disclosure import may_show_targets
from physalign_site.access import require

from ..curation.permissions import can_curate
from ..double.blind import hidden_problem_ids
from ..double.services import INDEPENDENT_PASSES
from ..forms import ProblemFilterForm
from ..models import APPROVAL_FRESHNESS_FIELDS, ParentProblem, PassDocument, ProblemImage, SecondAnnotation
from ..permissions import (
    can_edit_pass,
    can_open_pass_review,
    can_view_problems,
)
from ..selectors import (
    parent_detail_queryset,
    parent_facets,
    parent_list,
)
from .rendering import ALL_PASSES, ANNOTATION_PASSES, PROBLEMS_PER_PAGE, is_partial_request, page_render


@dataclass(frozen=True)
class PassCell:
    pass_no: int
    state: str  # missing | draft | submitted | approved | stale | rejected
    label: str
    url: str = ""  # the page this user opens for the pass ("" when their role opens none)


def pass_page_url(user: object, problem_id: str, pass_no: int) -> str:
    """Where a pass leads this user: editors to the workspace, source reviewers to the review page."""
    if can_edit_pass(user, pass_no):
        return reverse("annotation:pass_workspace", args=[problem_id, pass_no])
    if can_open_pass_review(user, pass_no):
        return reverse("annotation:pass_review", args=[problem_id, pass_no])
    return ""


@dataclass
class ProblemRow:
    problem: ParentProblem
    passes: list[PassCell] = field(default_factory=list)
    # the user annotates this problem a second time: its first annotation's state is hidden (annotation.double)
    independent: bool = False

    @property
    def approved_count(self) -> int:
        return sum(1 for cell in self.passes if cell.state == "approved")


STALE_WHAT = {
    "document": "document changed",
    "problem": "problem text, options or images changed",
    "upstream": "a pass it builds on changed",
}


def pass_cell(pass_no: int, document: PassDocument | None, url: str = "") -> PassCell:
    if document is None:
        return PassCell(pass_no, "missing", f"Pass {pass_no}: not started", url)
    if document.status == PassDocument.Status.APPROVED:
        if document.approval_is_fresh:
            return PassCell(pass_no, "approved", f"Pass {pass_no}: approved", url)
        changed = " and ".join(STALE_WHAT[reason] for reason in document.approval_stale_reasons) or "changed"
        return PassCell(pass_no, "stale", f"Pass {pass_no}: approval stale ({changed})", url)
    return PassCell(pass_no, document.status, f"Pass {pass_no}: {document.get_status_display().lower()}", url)


def _independent_row(problem: ParentProblem) -> ProblemRow:
    cells = [
        PassCell(
            n,
            "independent",
            f"Pass {n}: your independent annotation",
            reverse("double:workspace", args=[problem.problem_id, n]),
        )
        for n in INDEPENDENT_PASSES
    ]
    return ProblemRow(problem, cells, independent=True)


def _problem_rows(user: object, problems: list[ParentProblem]) -> list[ProblemRow]:
    rows = []
    hidden = hidden_problem_ids(user)
    for problem in problems:
        if problem.problem_id in hidden:
            rows.append(_independent_row(problem))
            continue
        by_pass = {document.pass_no: document for document in problem.passes.all()}
        cells = []
        for n in ANNOTATION_PASSES:
            document = by_pass.get(n)
            # a reviewer has nothing to open on a pass not written yet; an editor starts it
            url = pass_page_url(user, problem.problem_id, n)
            if document is None and not can_edit_pass(user, n):
                url = ""
            cells.append(pass_cell(n, document, url))
        rows.append(ProblemRow(problem, cells))
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
                    "id", "parent_id", "pass_no", *APPROVAL_FRESHNESS_FIELDS
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
            ("work", filters["work"]),
        )
        if value
    }
    context = {
        "form": form,
        "page": page,
        "rows": _problem_rows(request.user, list(page.object_list)),
        "active_filters": active,
        "filter_query": urlencode(active),
        "nav_section": "problems",
        "elided_pages": list(page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)),
    }
    response = page_render(request, "annotation/problem_list.html", "results", context)
    if is_partial_request(request):
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
    passes = [
        (
            n,
            by_pass.get(n),
            pass_page_url(request.user, problem.problem_id, n)
            if n in by_pass or can_edit_pass(request.user, n)
            else "",
        )
        for n in ALL_PASSES
    ]
    # Private fields leave the server only inside this dict, and only for admins (paper §3.2).
    private = (
        {"answer": problem.answer, "solution": problem.solution}
        if may_show_targets(request.user, where="page:problem", parents=[problem.pk])
        else None
    )
    options = [option for option in (problem.options or []) if isinstance(option, dict)]
    context = {
        "problem": problem,
        "images": list(problem.images.all()),
        "passes": passes,
        "options": options,
        "private": private,
        "double": _double_annotation(request.user, problem),
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/problem_detail.html", context)


def _double_annotation(user: object, problem: ParentProblem) -> dict[str, object] | None:
    """For a curator (a source reviewer or an admin), the problem's second annotation: who, each pass's state,
    and the curation page of each pass the second annotator has a document for. (The second annotator never
    reaches this page: ``annotation.double`` sends them to their own.)"""
    if not can_curate(user):
        return None
    second = SecondAnnotation.objects.filter(parent=problem).select_related("annotator").first()
    if second is None:
        return None
    states = dict(second.documents.values_list("pass_no", "status"))
    return {
        "annotator": second.annotator.get_username(),
        "passes": [
            {
                "pass_no": n,
                "status": states.get(n, "new"),
                "curate_url": reverse("curation:curate", args=[problem.problem_id, n]) if n in states else "",
            }
            for n in INDEPENDENT_PASSES
        ],
    }


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
    name = image.file.name
    assert name is not None  # open() above refuses (ValueError) a file without a name
    response = FileResponse(handle, content_type=image.media_type)
    response["Content-Length"] = str(image.file.size)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = f'inline; filename="{image.image_id}.{name.rsplit(".", 1)[-1]}"'
    return response
