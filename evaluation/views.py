"""Server-rendered evaluation pages: runs (launch, live progress), results, drill-down."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh
from django_htmx.middleware import HtmxDetails

from audit.disclosure import can_know_targets, disclose, may_show_targets
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_list_param, int_param
from run_engine.engine import QueueUnavailable

from . import selectors
from .drilldown import request_drilldown
from .forms import RunLaunchForm
from .models import EvalRequest, EvalRun
from .parsing import parse_response
from .permissions import can_run_evaluations
from .result_gaps import result_gaps
from .runs import (
    build_request,
    eval_run_budget_set,
    eval_run_cancel,
    eval_run_create,
    eval_run_preview,
    eval_run_resume,
    item_lines,
    run_item_file,
    run_items,
    run_progress,
    runs_progress,
)
from .runs.batch import run_batches


@login_required
@require_http_methods(["GET", "POST"])
@require(can_run_evaluations)
def run_list(request: HttpRequest) -> HttpResponse:
    form = RunLaunchForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = eval_run_create(
                **form.plan_arguments(),
                name=data["name"],
                actor=request.user,
                options=form.run_options(),
            )
        except QueueUnavailable as exc:  # the run is kept, paused: its page says why and offers Resume
            return redirect("evaluation:run_detail", pk=exc.extra["run"])
        except ApplicationError as exc:
            error = exc.message
        else:
            return redirect("evaluation:run_detail", pk=run.pk)
    listed = list(selectors.run_list()[:50])
    runs = list(zip(listed, runs_progress(listed), strict=True))
    return TemplateResponse(
        request,
        "evaluation/run_list.html",
        {
            "runs": runs,
            "form": form,
            "error": error,
            "nav_section": "runs",
            "preview": eval_run_preview(**form.plan_arguments(), batch=form.batch_chosen()),
        },
    )


@login_required
@require_GET
@require(can_run_evaluations)
def run_preview(request: HttpRequest) -> TemplateResponse:
    """The launch form's request count for the current selection (htmx): what the launch would create."""
    form = RunLaunchForm(request.GET)
    return TemplateResponse(
        request,
        "evaluation/run_list.html#run-preview",
        {"preview": eval_run_preview(**form.plan_arguments(), batch=form.batch_chosen())},
    )


@login_required
@require_GET
@require(can_run_evaluations)
def run_detail(request: HttpRequest, pk: int) -> TemplateResponse:
    run = get_object_or_404(EvalRun.objects.select_related("release"), pk=pk)
    chosen = int_list_param(request.GET.getlist("solve"), name="solve")
    context = {
        "run": run,
        "progress": run_progress(run),
        "batches": run_batches(run),
        "tables": selectors.results_tables(run.metrics),
        "chart": selectors.chart_data(run.metrics),
        "gaps": result_gaps(run),
        "nav_section": "runs",
        "solving": selectors.solving_section(run, chosen),
        "manifest_json": json.dumps(run.manifest, indent=1, sort_keys=True),
        "targets_shown": can_know_targets(request.user),
    }
    return TemplateResponse(request, "evaluation/run_detail.html", context)


@login_required
@require_GET
@require(can_run_evaluations)
def run_progress_fragment(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    if run.status in (EvalRun.Status.COMPLETED, EvalRun.Status.FAILED) and htmx:
        return HttpResponseClientRefresh()  # show the results once, then stop polling
    return TemplateResponse(
        request,
        "evaluation/run_detail.html#progress",
        {"run": run, "progress": run_progress(run), "batches": run_batches(run)},
    )


@login_required
@require_POST
@require(can_run_evaluations)
def run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    if action not in ("cancel", "resume"):
        raise Http404("unknown action")
    try:
        if action == "cancel":
            eval_run_cancel(run=run, actor=request.user)
        else:
            if run.status == EvalRun.Status.PAUSED and request.POST.get("budget_usd", "").strip():
                run = eval_run_budget_set(run=run, budget_usd=request.POST["budget_usd"], actor=request.user)
            eval_run_resume(run=run, actor=request.user)
    except ApplicationError:
        pass
    return redirect("evaluation:run_detail", pk=run.pk)


@login_required
@require_GET
@require(can_run_evaluations)
def run_items_page(request: HttpRequest, pk: int) -> TemplateResponse:
    run = get_object_or_404(EvalRun, pk=pk)
    filters = {k: request.GET.get(k, "") for k in ("model", "condition", "status")}
    after, before = (int_param(request.GET.get(k), name=k) for k in ("after", "before"))
    page = selectors.run_requests_page(
        run,
        after=after,
        before=before,
        model=filters["model"],
        condition=filters["condition"],
        status=filters["status"],
    )
    # each row's score beside the model's answer tells what the target is: whoever sees it is not blind on it
    disclose(request.user, where="page:eval-items", probes=selectors.request_probe_pairs(page.rows))
    return TemplateResponse(
        request,
        "evaluation/run_items.html",
        {
            "run": run,
            "page": page,
            "filters": filters,
            "nav_section": "runs",
            "models": run.model_configs.all(),
            "statuses": EvalRequest.Status.choices,
            "conditions": run.conditions,
        },
    )


@login_required
@require_GET
@require(can_run_evaluations)
def request_detail(request: HttpRequest, pk: int) -> TemplateResponse:
    row = get_object_or_404(
        EvalRequest.objects.select_related("run", "model", "probe", "probe__key", "score"), pk=pk
    )
    other = {
        r.condition: r
        for r in EvalRequest.objects.filter(run=row.run, model=row.model, probe=row.probe).select_related(
            "score"
        )
    }
    raw, gold = other.get("raw"), other.get("gold")
    transition = None
    if raw and gold and getattr(raw, "score", None) and getattr(gold, "score", None):
        transition = (raw.score.G, gold.score.G)
    messages = row.probe.gold_messages if row.condition == "gold" else row.probe.raw_messages
    sent = build_request(row, row.run.seed)
    # the score beside the parsed answer tells the target, so every reader is recorded; the target itself (the
    # drill-down: expected alias, entity ids and types, expected reading) is shown to key holders only
    pair = [(row.probe.parent_id, row.probe.logical_probe_id)]
    targets = may_show_targets(request.user, where="page:eval-request", probes=pair)
    if not targets:
        disclose(request.user, where="page:eval-request", probes=pair)
    parsed = parse_response(row.raw_output) if row.raw_output is not None else None
    return TemplateResponse(
        request,
        "evaluation/request_detail.html",
        {
            "row": row,
            "score": getattr(row, "score", None),
            "drill": request_drilldown(row) if targets else None,
            "targets_shown": targets,
            "parsed_json": None if parsed is None else json.dumps(parsed, ensure_ascii=False, indent=1),
            "others": other,
            "transition": transition,
            "system_message": messages["system"],
            "user_message": sent.user,
            "images_sent": len(sent.images),
            "attachment_ids": [] if row.condition == "no_image" else row.probe.attachment_ids,
            "attempts_json": json.dumps(row.attempts, indent=1),
            "nav_section": "runs",
        },
    )


@login_required
@require_GET
@require(can_run_evaluations)
def run_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponseBase:
    run = get_object_or_404(EvalRun, pk=pk)
    fmt = "items" if fmt == "jsonl" else fmt  # the item file is JSONL
    if fmt not in ("csv", "json", "items"):
        raise Http404("unknown download format")
    if fmt == "items":  # per-probe outcomes (nearest region, C, G): key holders only, and recorded
        if not may_show_targets(
            request.user, where="download:eval-items", probes=selectors.run_probe_pairs(run)
        ):
            raise PermissionDenied("The item file tells each probe's target: key holders only.")
    response: HttpResponseBase
    if fmt == "csv":
        response = HttpResponse(selectors.snapshots_csv(run), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-metrics.csv"'
    elif fmt == "json":
        response = JsonResponse(
            {"run": run.pk, "manifest": run.manifest, "metrics": run.metrics}, json_dumps_params={"indent": 1}
        )
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-metrics.json"'
    elif run.status == EvalRun.Status.COMPLETED:
        # written when the run was scored (rebuilt by a rescore); a run scored before item files were kept
        # gets it built here, once
        response = FileResponse(
            run_item_file(run),
            as_attachment=True,
            filename=f"run-{run.pk}-items.jsonl",
            content_type=ITEMS_CONTENT_TYPE,
        )
    else:  # still running (or cancelled, failed): the rows ended so far, streamed
        response = StreamingHttpResponse(item_lines(run_items(run)), content_type=ITEMS_CONTENT_TYPE)
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-items.jsonl"'
    return response


ITEMS_CONTENT_TYPE = "application/x-ndjson"
