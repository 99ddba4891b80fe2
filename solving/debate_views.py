"""Debate pages (admins): launch with ablation switches, run progress and results, per-problem transcripts,
and the configuration comparison (Debate Tables 3–5)."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRefresh
from django_htmx.middleware import HtmxDetails

from annotation.models import Source
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_list_param
from probes.models import Release

from .debate.frontend import FrontendSwitches
from .debate.orchestrator import DebateConfig
from .debate_runs import (
    LEVELS,
    comparable_runs,
    debate_run_create,
    run_stats,
    settings_label,
    transcript_rounds,
)
from .debate_runs import (
    debate_run_list as debate_runs_query,
)
from .launch_choices import problem_sources, solver_models, source_label, source_parent_ids
from .models import DebateTurn, SolveResponse, SolveRun
from .permissions import can_run_solving
from .selectors import reference_for

_DEBATE_DEFAULTS = DebateConfig()
_FRONTEND_DEFAULTS = FrontendSwitches()


def _model_choices(blank: str) -> list[tuple[str, str]]:
    names = solver_models().values_list("name", "provider")
    return [("", blank), *[(name, f"{name} ({provider})") for name, provider in names]]


class SourceChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return source_label(obj)


class DebateLaunchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    level = forms.TypedChoiceField(
        choices=[(n, f"Level {n}: {label}") for n, label in LEVELS.items()], coerce=int, initial=1
    )
    release = forms.ModelChoiceField(
        queryset=Release.objects.all(),
        required=False,
        to_field_name="release_id",
        empty_label="—",
        help_text="Every parent problem of this release.",
    )
    source = SourceChoiceField(
        queryset=Source.objects.none(),
        required=False,
        empty_label="—",
        label="Problem source",
        help_text="Every parent problem of this source.",
    )
    parents = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Parent problem ids, separated by commas, spaces or lines.",
    )
    solver_1 = forms.ChoiceField(label="Solver 1 (default solver)")
    solver_2 = forms.ChoiceField(required=False, label="Solver 2")
    solver_3 = forms.ChoiceField(required=False, label="Solver 3")
    pruner = forms.ChoiceField(required=False, help_text="Default: solver 2 (Debate §3.3.2).")
    selector = forms.ChoiceField(required=False, help_text="Without one, the default solver decides ties.")
    extractor = forms.ChoiceField(required=False, label="Light answer extractor")
    frontend = forms.ChoiceField(
        required=False, label="Front-end model", help_text="Cropper, OCR, SVG, reconstructor."
    )
    pruning = forms.BooleanField(required=False, initial=_DEBATE_DEFAULTS.pruning)
    strict_pruning = forms.BooleanField(
        required=False, initial=_DEBATE_DEFAULTS.strict_pruning, help_text="Mask 'not sure' too."
    )
    value_voting = forms.BooleanField(
        required=False, initial=_DEBATE_DEFAULTS.value_voting, help_text="Off: string voting (the ablation)."
    )
    max_resolve_rounds = forms.IntegerField(
        required=False, min_value=0, max_value=2, initial=_DEBATE_DEFAULTS.max_resolve_rounds
    )
    rel_tol = forms.FloatField(
        required=False, min_value=1e-9, max_value=0.5, initial=_DEBATE_DEFAULTS.rel_tol, label="Tolerance"
    )
    cropper = forms.BooleanField(required=False, initial=_FRONTEND_DEFAULTS.cropper, label="Cropper (L4)")
    sharpen = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.sharpen, label="Image sharpening (L4)"
    )
    ocr = forms.ChoiceField(
        required=False,
        choices=[("model", "Model OCR"), ("tesseract", "Local tesseract")],
        initial=_FRONTEND_DEFAULTS.ocr,
        label="Text OCR (L4)",
    )
    visual_extractor = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.visual_extractor, label="Visual extractor: SVG (L3–4)"
    )
    reconstructor = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.reconstructor, label="Problem reconstructor (L2–4)"
    )
    verify_iterations = forms.IntegerField(
        required=False, min_value=0, max_value=10, initial=_FRONTEND_DEFAULTS.verify_iterations
    )
    svg_char_cap = forms.IntegerField(
        required=False, min_value=500, max_value=100_000, initial=_FRONTEND_DEFAULTS.svg_char_cap
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in ("solver_1", "solver_2", "solver_3", "pruner", "selector", "extractor", "frontend"):
            self._choice_field(field).choices = _model_choices("—")
        self._model_choice_field("source").queryset = problem_sources()

    def _choice_field(self, name: str) -> forms.ChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        return field

    def _model_choice_field(self, name: str) -> forms.ModelChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ModelChoiceField)
        return field

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        given = [data.get("release"), data.get("source"), (data.get("parents") or "").strip()]
        if sum(bool(x) for x in given) > 1:
            raise forms.ValidationError(
                "Choose a release, a problem source or list parent problem ids, only one of the three."
            )
        return data

    def launch_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        solvers = [data[f"solver_{n}"] for n in (1, 2, 3) if data.get(f"solver_{n}")]
        settings = {
            key: data[key]
            for key in (
                "pruning",
                "strict_pruning",
                "value_voting",
                "max_resolve_rounds",
                "rel_tol",
                "cropper",
                "sharpen",
                "ocr",
                "visual_extractor",
                "reconstructor",
                "verify_iterations",
                "svg_char_cap",
            )
        }
        defaults = {
            "max_resolve_rounds": _DEBATE_DEFAULTS.max_resolve_rounds,
            "rel_tol": _DEBATE_DEFAULTS.rel_tol,
            "ocr": _FRONTEND_DEFAULTS.ocr,
            "verify_iterations": _FRONTEND_DEFAULTS.verify_iterations,
            "svg_char_cap": _FRONTEND_DEFAULTS.svg_char_cap,
        }
        settings.update({k: v for k, v in defaults.items() if settings.get(k) in (None, "")})
        parents = [p for p in re.split(r"[\s,]+", data.get("parents") or "") if p]
        if data.get("source"):
            parents = source_parent_ids(data["source"])
        return {
            "solver_names": solvers,
            "pruner": data["pruner"] or None,
            "selector": data["selector"] or None,
            "extractor": data["extractor"] or None,
            "frontend": data["frontend"] or None,
            "level": data["level"],
            "settings": settings,
            "release": data["release"],
            "parent_ids": parents or None,
            "name": data["name"],
        }


@login_required
@require_http_methods(["GET", "POST"])
@require(can_run_solving)
def debate_run_list(request: HttpRequest) -> HttpResponse:
    form = DebateLaunchForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            run = debate_run_create(actor=request.user, **form.launch_kwargs())
        except ApplicationError as exc:
            error = exc.message
        else:
            return redirect("solving:debate_run_detail", pk=run.pk)
    runs = [run_stats(run) for run in debate_runs_query()[:50]]
    return TemplateResponse(
        request,
        "solving/debate_run_list.html",
        {"form": form, "error": error, "runs": runs, "nav_section": "debate"},
    )


def _detail_context(run: SolveRun) -> dict[str, Any]:
    return {
        "run": run,
        "debate": run.debate,
        "stats": run_stats(run),
        "settings_label": settings_label(run.debate),
        "level_label": LEVELS.get(run.debate.level, ""),
        "nav_section": "debate",
    }


@login_required
@require_GET
@require(can_run_solving)
def debate_run_detail(request: HttpRequest, pk: int) -> TemplateResponse:
    run = get_object_or_404(
        SolveRun.objects.select_related("debate", "release"), pk=pk, kind=SolveRun.Kind.DEBATE
    )
    context = _detail_context(run)
    context["responses"] = list(run.responses.select_related("parent").order_by("parent__problem_id"))
    decided = {}
    for response_id, round_number, parsed in DebateTurn.objects.filter(
        response__run=run, stage="selection"
    ).values_list("response_id", "round", "parsed"):
        decided[response_id] = (round_number, (parsed or {}).get("decided_by", ""))
    context["decided"] = decided
    for response in context["responses"]:
        response.rounds_used, response.decided_by = decided.get(response.pk, (None, ""))
    return TemplateResponse(request, "solving/debate_run_detail.html", context)


@login_required
@require_GET
@require(can_run_solving)
def debate_run_progress(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(SolveRun.objects.select_related("debate"), pk=pk, kind=SolveRun.Kind.DEBATE)
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    if run.status not in (SolveRun.Status.QUEUED, SolveRun.Status.RUNNING) and htmx:
        return HttpResponseClientRefresh()  # show the finished table once, then stop polling
    return TemplateResponse(request, "solving/debate_run_detail.html#progress", _detail_context(run))


@login_required
@require_GET
@require(can_run_solving)
def debate_transcript(request: HttpRequest, pk: int) -> TemplateResponse:
    response = get_object_or_404(
        SolveResponse.objects.select_related("run__debate", "parent"), pk=pk, run__kind=SolveRun.Kind.DEBATE
    )
    rounds = transcript_rounds(response)
    return TemplateResponse(
        request,
        "solving/debate_transcript.html",
        {
            "response": response,
            "run": response.run,
            "debate": response.run.debate,
            "rounds": rounds,
            "parent": response.parent,
            "reference": reference_for(request.user, response.parent, where="page:debate-transcript"),
            "nav_section": "debate",
        },
    )


@login_required
@require_GET
@require(can_run_solving)
def debate_compare(request: HttpRequest) -> TemplateResponse:
    chosen = int_list_param(request.GET.getlist("runs"), name="runs")
    rows, same_parents = comparable_runs(chosen or None)
    candidates = SolveRun.objects.select_related("model", "debate").order_by("-created_at")[:100]
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
            "candidates": candidates,
            "chosen": {r.run.pk for r in rows},
            "chart": chart,
            "nav_section": "debate",
        },
    )
