"""Solve-run pages (admins): one family for both kinds of run. Each kind has its launch form and run list, run
page, htmx progress and response page; they differ only by what ``PAGES[kind]`` names (form, create service,
templates, context). The ``/solve-runs/`` pages show runs of every kind (the list has a Kind column) with
script scores and expert grading; the ``/debate/`` pages show debate runs with their statistics, transcripts
and the comparison of configurations (Debate Tables 3–5). Views stay thin: forms → services, reads →
selectors."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh
from django_htmx.middleware import HtmxDetails

from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_list_param

from . import selectors
from .forms import DebateLaunchForm, GradeSubmission, RunLaunchForm, SolveLaunchForm
from .grading import solve_response_grade
from .models import SolveResponse, SolveRun
from .permissions import can_grade_solving, can_run_solving
from .runs import (
    LEVELS,
    build_solve_request,
    comparable_runs,
    debate_run_create,
    run_stats,
    settings_label,
    solve_run_cancel,
    solve_run_create,
    solve_run_resume,
    transcript_rounds,
)
from .scoring import EXPERT_TYPES
from .summary import solve_run_summary

RUN_LIST_SIZE = 50
RESPONSES_PER_PAGE = 50

# ------------------------------------------------------------------------------------------------ the request


@dataclass(frozen=True)
class ResponseTable:
    """The run page's response table as asked for: ``status``/``grading`` filters and the page number."""

    filters: dict[str, str]
    page: str | None


def _response_table(request: HttpRequest) -> ResponseTable:
    return ResponseTable(
        filters={k: request.GET.get(k, "") for k in ("status", "grading")}, page=request.GET.get("page")
    )


def _launch_form(request: HttpRequest, kind: str) -> RunLaunchForm:
    """The kind's launch form, bound to the POST when there is one. The two forms are named in this helper
    rather than in ``PAGES`` so that a reading of the views' source (the HTML fuzz) finds their fields."""
    if kind == SolveRun.Kind.DEBATE:
        return DebateLaunchForm(request.POST or None)
    return SolveLaunchForm(request.POST or None)


def _grade_posted(request: HttpRequest) -> GradeSubmission:
    return GradeSubmission.from_rows(
        descriptions=request.POST.getlist("description"),
        awarded=request.POST.getlist("awarded"),
        maxima=request.POST.getlist("maximum"),
        correct=request.POST.get("correct"),
        note=request.POST.get("note", ""),
        then=request.POST.get("then"),
    )


# ------------------------------------------------------------------------------------------------ single pages


def _single_rows() -> list[Any]:
    return [(r, solve_run_summary(r)) for r in selectors.solve_run_list()[:RUN_LIST_SIZE]]


def _single_progress(run: SolveRun) -> dict[str, Any]:
    return {"run": run, "summary": solve_run_summary(run)}


def _single_detail(request: HttpRequest, run: SolveRun, table: ResponseTable) -> dict[str, Any]:
    rows = selectors.solve_responses(run, **table.filters)
    return {
        **_single_progress(run),
        "page": Paginator(rows, RESPONSES_PER_PAGE).get_page(table.page),
        "filters": table.filters,
        "statuses": SolveResponse.Status.choices,
        "gradings": SolveResponse.Grading.choices,
        "next_ungraded": selectors.pending_responses(run).first(),
        "can_grade": can_grade_solving(request.user),
        "manifest_json": json.dumps(run.manifest, indent=1, sort_keys=True),
    }


def _single_response(request: HttpRequest, row: SolveResponse) -> dict[str, Any]:
    sent = build_solve_request(row.parent)
    return {
        "row": row,
        "parent": row.parent,
        "reference": selectors.reference_for(request.user, row.parent, where="page:solve-response"),
        "components": list(row.components.all()),
        "turns": list(selectors.transcript_turns(row)),
        "system_message": sent.system,
        "user_message": sent.user,
        "images": list(row.parent.images.order_by("ordinal")),
        "attempts_json": json.dumps(row.attempts, indent=1),
        "gradable": row.answer_type in EXPERT_TYPES
        and row.grading in ("pending", "graded")
        and can_grade_solving(request.user),
    }


# ------------------------------------------------------------------------------------------------ debate pages


def _debate_rows() -> list[Any]:
    return [run_stats(r) for r in selectors.solve_run_list(kind=SolveRun.Kind.DEBATE)[:RUN_LIST_SIZE]]


def _debate_progress(run: SolveRun) -> dict[str, Any]:
    return {
        "run": run,
        "debate": run.debate,
        "stats": run_stats(run),
        "settings_label": settings_label(run.debate),
        "level_label": LEVELS.get(run.debate.level, ""),
    }


def _debate_detail(request: HttpRequest, run: SolveRun, table: ResponseTable) -> dict[str, Any]:
    return {**_debate_progress(run), "responses": selectors.debate_responses(run)}  # every problem, one table


def _debate_response(request: HttpRequest, row: SolveResponse) -> dict[str, Any]:
    return {
        "response": row,
        "run": row.run,
        "debate": row.run.debate,
        "rounds": transcript_rounds(row),
        "parent": row.parent,
        "reference": selectors.reference_for(request.user, row.parent, where="page:debate-transcript"),
    }


# ------------------------------------------------------------------------------------------------ the kinds


@dataclass(frozen=True)
class KindPages:
    """What the pages of one kind of run name (its launch form: ``_launch_form``); ``runs_of`` filters the runs
    they show ("" = every kind)."""

    runs_of: str
    nav_section: str
    create: Callable[..., SolveRun]
    list_template: str
    list_rows: Callable[[], list[Any]]
    detail_url: str
    detail_template: str
    detail_context: Callable[[HttpRequest, SolveRun, ResponseTable], dict[str, Any]]
    progress_context: Callable[[SolveRun], dict[str, Any]]
    response_template: str
    response_context: Callable[[HttpRequest, SolveResponse], dict[str, Any]]


PAGES: dict[str, KindPages] = {
    SolveRun.Kind.SINGLE: KindPages(
        runs_of="",
        nav_section="solving",
        create=solve_run_create,
        list_template="solving/solve_run_list.html",
        list_rows=_single_rows,
        detail_url="solving:solve_run_detail",
        detail_template="solving/solve_run_detail.html",
        detail_context=_single_detail,
        progress_context=_single_progress,
        response_template="solving/solve_response_detail.html",
        response_context=_single_response,
    ),
    SolveRun.Kind.DEBATE: KindPages(
        runs_of=SolveRun.Kind.DEBATE,
        nav_section="debate",
        create=debate_run_create,
        list_template="solving/debate_run_list.html",
        list_rows=_debate_rows,
        detail_url="solving:debate_run_detail",
        detail_template="solving/debate_run_detail.html",
        detail_context=_debate_detail,
        progress_context=_debate_progress,
        response_template="solving/debate_transcript.html",
        response_context=_debate_response,
    ),
}


def _run_or_404(pages: KindPages, pk: int) -> SolveRun:
    run = selectors.solve_run_get(pk=pk, kind=pages.runs_of)
    if run is None:
        raise Http404("No such run.")
    return run


def _response_or_404(pk: int, kind: str = "") -> SolveResponse:
    row = selectors.solve_response_get(pk=pk, kind=kind)
    if row is None:
        raise Http404("No such response.")
    return row


# ------------------------------------------------------------------------------------------------ views


@login_required
@require_http_methods(["GET", "POST"])
@require(can_run_solving)
def run_list(request: HttpRequest, kind: str) -> HttpResponse:
    """The kind's launch form and its newest runs; a refused launch answers 400 with the reason."""
    pages = PAGES[kind]
    form = _launch_form(request, kind)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            run = pages.create(actor=request.user, **form.launch_kwargs())
        except ApplicationError as exc:
            error = exc.message
        else:
            return redirect(pages.detail_url, pk=run.pk)
    return TemplateResponse(
        request,
        pages.list_template,
        {"runs": pages.list_rows(), "form": form, "error": error, "nav_section": pages.nav_section},
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_GET
@require(can_run_solving)
def run_detail(request: HttpRequest, pk: int, kind: str) -> TemplateResponse:
    pages = PAGES[kind]
    run = _run_or_404(pages, pk)
    table = _response_table(request)
    context = {**pages.detail_context(request, run, table), "nav_section": pages.nav_section}
    return TemplateResponse(request, pages.detail_template, context)


@login_required
@require_GET
@require(can_run_solving)
def run_progress(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    pages = PAGES[kind]
    run = _run_or_404(pages, pk)
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    if run.status not in (SolveRun.Status.QUEUED, SolveRun.Status.RUNNING) and htmx:
        return HttpResponseClientRefresh()  # show the finished table once, then stop polling
    context = {**pages.progress_context(run), "nav_section": pages.nav_section}
    return TemplateResponse(request, f"{pages.detail_template}#progress", context)


@login_required
@require_POST
@require(can_run_solving)
def run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = _run_or_404(PAGES[SolveRun.Kind.SINGLE], pk)
    if action not in ("cancel", "resume"):
        raise Http404("unknown action")
    try:
        if action == "cancel":
            solve_run_cancel(run=run, actor=request.user)
        else:
            solve_run_resume(run=run, actor=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return redirect("solving:solve_run_detail", pk=run.pk)


@login_required
@require_GET
@require(can_run_solving)
def response_detail(request: HttpRequest, pk: int, kind: str) -> TemplateResponse:
    pages = PAGES[kind]
    row = _response_or_404(pk, pages.runs_of)
    context = {**pages.response_context(request, row), "nav_section": pages.nav_section}
    return TemplateResponse(request, pages.response_template, context)


@login_required
@require_http_methods(["GET", "POST"])
@require(can_grade_solving)
def response_grade(request: HttpRequest, pk: int) -> HttpResponse:
    """The expert grading page of a short-answer or calculation response (key holders)."""
    row = _response_or_404(pk)
    if row.answer_type not in EXPERT_TYPES or row.grading not in ("pending", "graded"):
        raise Http404("this response is not graded by an expert")
    error, status = "", 200
    correct, note = bool(row.correct), row.grade_note
    if request.method == "POST":
        grade = _grade_posted(request)
        correct, note = grade.correct, grade.note
        try:
            solve_response_grade(
                response=row, components=grade.components, correct=correct, note=note, actor=request.user
            )
        except ApplicationError as exc:
            error, status = exc.message, 400
            rows, source = grade.components, None
        else:
            return _after_grade(request, row, then_next=grade.then_next)
    else:
        rows, source = selectors.grade_rows_prefill(row)
    return TemplateResponse(
        request,
        "solving/solve_grade.html",
        {
            "row": row,
            "parent": row.parent,
            "rows": rows,
            "rubric_source": source,
            "reference": selectors.reference_for(request.user, row.parent, where="page:solve-grade"),
            "error": error,
            "correct": correct,
            "note": note,
            "next_ungraded": selectors.next_ungraded(row),
            "images": list(row.parent.images.order_by("ordinal")),
            "pending_left": selectors.pending_responses(row.run).count(),
            "detail_url": reverse("solving:solve_response_detail", args=[row.pk]),
            "nav_section": "solving",
        },
        status=status,
    )


def _after_grade(request: HttpRequest, row: SolveResponse, *, then_next: bool) -> HttpResponse:
    if not then_next:
        messages.success(request, "Grade saved.")
        return redirect("solving:solve_response_grade", pk=row.pk)
    following = selectors.next_ungraded(row)
    if following is not None:
        messages.success(request, f"Saved the grade of {row.parent.problem_id}.")
        return redirect("solving:solve_response_grade", pk=following.pk)
    messages.success(request, "Saved. No ungraded response is left in this run.")
    return redirect("solving:solve_run_detail", pk=row.run_id)


@login_required
@require_GET
@require(can_run_solving)
def run_compare(request: HttpRequest) -> TemplateResponse:
    """Single solvers and debate configurations over the same parents (Debate Tables 3–5)."""
    chosen = int_list_param(request.GET.getlist("runs"), name="runs")
    rows, same_parents = comparable_runs(chosen or None)
    chart = {
        "labels": [f"#{r.run.pk} {r.label}" for r in rows],
        "accuracy": [r.binary_acc.lower for r in rows],
        "solve_acc": [r.solve_acc.lower for r in rows],
        "cost_per_problem": [float(r.cost_per_problem or 0) for r in rows],
        "avg_calls": [r.avg_calls or 0 for r in rows],
    }
    return TemplateResponse(
        request,
        "solving/debate_compare.html",
        {
            "rows": rows,
            "same_parents": same_parents,
            "candidates": selectors.compare_candidates()[:100],
            "chosen": {r.run.pk for r in rows},
            "chart": chart,
            "nav_section": "debate",
        },
    )
