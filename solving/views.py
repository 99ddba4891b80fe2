"""Solving-run pages (admin only): launch + list, run detail with live progress, response detail, expert grading."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh
from django_htmx.middleware import HtmxDetails

from annotation.models import Source
from models_registry.models import ModelConfig
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from probes.models import Release

from . import selectors
from .grading import solve_response_grade
from .launch_choices import problem_sources, solver_models, source_label, source_parent_ids
from .models import SolveResponse, SolveRun
from .permissions import can_grade_solving, can_run_solving
from .runs import build_solve_request, solve_run_cancel, solve_run_create, solve_run_resume
from .scoring import EXPERT_TYPES
from .summary import solve_run_summary


class SourceChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return source_label(obj)


class SolveLaunchForm(forms.Form):
    model = forms.ModelChoiceField(
        queryset=ModelConfig.objects.none(),
        empty_label=None,
        help_text="Active models that can solve a problem (the OCR probe baseline cannot).",
    )
    release = forms.ModelChoiceField(
        queryset=Release.objects.all(),
        required=False,
        empty_label="— none —",
        help_text="Solve every parent problem of this release…",
    )
    source = SourceChoiceField(
        queryset=Source.objects.none(),
        required=False,
        empty_label="— none —",
        label="Problem source",
        help_text="…or every parent problem of this source…",
    )
    parents = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="…or these parent problem ids (comma, space or new-line separated).",
    )
    name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._model_choice_field("model").queryset = solver_models()
        self._model_choice_field("source").queryset = problem_sources()

    def _model_choice_field(self, name: str) -> forms.ModelChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ModelChoiceField)
        return field

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        ids = [p for p in re.split(r"[\s,;]+", data.get("parents") or "") if p]
        if sum(bool(x) for x in (data.get("release"), data.get("source"), ids)) != 1:
            raise forms.ValidationError(
                "Choose a release, a problem source or list parent problem ids (exactly one of the three)."
            )
        data["parent_ids"] = source_parent_ids(data["source"]) if data.get("source") else ids
        return data


@login_required
@require_http_methods(["GET", "POST"])
@require(can_run_solving)
def solve_run_list(request: HttpRequest) -> HttpResponse:
    form = SolveLaunchForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = solve_run_create(
                model=data["model"],
                release=data["release"],
                parent_ids=data["parent_ids"] or None,
                name=data["name"],
                actor=request.user,
            )
        except ApplicationError as exc:
            error = exc.message
        else:
            return redirect("solving:solve_run_detail", pk=run.pk)
    runs = [(r, solve_run_summary(r)) for r in selectors.solve_run_list()[:50]]
    status = 400 if request.method == "POST" else 200
    return TemplateResponse(
        request,
        "solving/solve_run_list.html",
        {"runs": runs, "form": form, "error": error, "nav_section": "solving"},
        status=status,
    )


@login_required
@require_GET
@require(can_run_solving)
def solve_run_detail(request: HttpRequest, pk: int) -> TemplateResponse:
    run = get_object_or_404(SolveRun.objects.select_related("model", "release"), pk=pk)
    filters = {k: request.GET.get(k, "") for k in ("status", "grading")}
    page = Paginator(selectors.solve_responses(run, **filters), 50).get_page(request.GET.get("page"))
    next_ungraded = run.responses.filter(grading=SolveResponse.Grading.PENDING).order_by("pk").first()
    return TemplateResponse(
        request,
        "solving/solve_run_detail.html",
        {
            "run": run,
            "summary": solve_run_summary(run),
            "page": page,
            "filters": filters,
            "statuses": SolveResponse.Status.choices,
            "gradings": SolveResponse.Grading.choices,
            "next_ungraded": next_ungraded,
            "can_grade": can_grade_solving(request.user),
            "nav_section": "solving",
            "manifest_json": json.dumps(run.manifest, indent=1, sort_keys=True),
        },
    )


@login_required
@require_GET
@require(can_run_solving)
def solve_run_progress(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(SolveRun, pk=pk)
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    if run.status not in (SolveRun.Status.QUEUED, SolveRun.Status.RUNNING) and htmx:
        return HttpResponseClientRefresh()  # show the scored table once, then stop polling
    return TemplateResponse(
        request, "solving/solve_run_detail.html#progress", {"run": run, "summary": solve_run_summary(run)}
    )


@login_required
@require_POST
@require(can_run_solving)
def solve_run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = get_object_or_404(SolveRun, pk=pk)
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


def _response(pk: int) -> SolveResponse:
    return get_object_or_404(SolveResponse.objects.select_related("run__model", "parent", "graded_by"), pk=pk)


@login_required
@require_GET
@require(can_run_solving)
def solve_response_detail(request: HttpRequest, pk: int) -> TemplateResponse:
    row = _response(pk)
    sent = build_solve_request(row.parent)
    return TemplateResponse(
        request,
        "solving/solve_response_detail.html",
        {
            "row": row,
            "parent": row.parent,
            "reference": selectors.reference_for(request.user, row.parent, where="page:solve-response"),
            "components": list(row.components.all()),
            "turns": list(row.turns.select_related("model")),
            "system_message": sent.system,
            "user_message": sent.user,
            "images": list(row.parent.images.order_by("ordinal")),
            "attempts_json": json.dumps(row.attempts, indent=1),
            "gradable": row.answer_type in EXPERT_TYPES
            and row.grading in ("pending", "graded")
            and can_grade_solving(request.user),
            "nav_section": "solving",
        },
    )


def _prefill(row: SolveResponse) -> tuple[list[dict[str, str]], SolveResponse | None]:
    """The response's own components, else the rubric of another graded response of the same parent (awarded
    left empty for the grader), else one empty row."""
    own = list(row.components.all())
    if own:
        return [
            {"description": c.description, "awarded": str(c.awarded), "maximum": str(c.maximum)} for c in own
        ], None
    source = (
        SolveResponse.objects.filter(parent=row.parent, grading=SolveResponse.Grading.GRADED)
        .exclude(pk=row.pk)
        .select_related("run__model")
        .order_by("-graded_at")
        .first()
    )
    if source:
        return [
            {"description": c.description, "awarded": "", "maximum": str(c.maximum)}
            for c in source.components.all()
        ], source
    return [{"description": "", "awarded": "", "maximum": "1"}], None


def _next_ungraded(row: SolveResponse) -> SolveResponse | None:
    pending = (
        row.run.responses.filter(grading=SolveResponse.Grading.PENDING).exclude(pk=row.pk).order_by("pk")
    )
    return pending.filter(pk__gt=row.pk).first() or pending.first()


@login_required
@require_http_methods(["GET", "POST"])
@require(can_grade_solving)
def solve_response_grade_page(request: HttpRequest, pk: int) -> HttpResponse:
    row = _response(pk)
    if row.answer_type not in EXPERT_TYPES or row.grading not in ("pending", "graded"):
        raise Http404("this response is not graded by an expert")
    error = ""
    status = 200
    correct = bool(row.correct)
    note = row.grade_note
    if request.method == "POST":
        descriptions, awarded, maxima = (
            request.POST.getlist(k) for k in ("description", "awarded", "maximum")
        )
        components = [
            {"description": d, "awarded": a, "maximum": m}
            for d, a, m in zip(descriptions, awarded, maxima, strict=False)
        ]
        correct = request.POST.get("correct") == "on"
        note = request.POST.get("note", "")
        try:
            solve_response_grade(
                response=row, components=components, correct=correct, note=note, actor=request.user
            )
        except ApplicationError as exc:
            error, status = exc.message, 400
            rows, source = components, None
        else:
            if request.POST.get("then") == "next":
                following = _next_ungraded(row)
                if following is not None:
                    messages.success(request, f"Saved the grade of {row.parent.problem_id}.")
                    return redirect("solving:solve_response_grade", pk=following.pk)
                messages.success(request, "Saved. No ungraded response is left in this run.")
                return redirect("solving:solve_run_detail", pk=row.run_id)
            messages.success(request, "Grade saved.")
            return redirect("solving:solve_response_grade", pk=row.pk)
    else:
        rows, source = _prefill(row)
    following = _next_ungraded(row)
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
            "next_ungraded": following,
            "images": list(row.parent.images.order_by("ordinal")),
            "pending_left": row.run.responses.filter(grading=SolveResponse.Grading.PENDING).count(),
            "detail_url": reverse("solving:solve_response_detail", args=[row.pk]),
            "nav_section": "solving",
        },
        status=status,
    )
