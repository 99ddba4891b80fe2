"""Admin pages: compile runs (launch, progress, issues by code), the probe browser, releases."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.middleware import HtmxDetails

from audit.disclosure import may_show_targets
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from .attachments import attachment_of
from .models import CompileRun, Probe, Release
from .permissions import can_manage_probes
from .run_labels import count_rows, run_state, timing_rows
from .selectors import issues_by_code, probe_list, probe_parent_pairs
from .services import compile_run_create

INTERFACES = ["T02-single", "T03-image", "T03-text"]


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_probes)
def run_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        parent_ids = [p for p in request.POST.get("parents", "").split() if p]
        try:
            seed = int_param(request.POST.get("seed"), name="seed")
            run = compile_run_create(
                actor=request.user, parent_ids=parent_ids or None, seed=2027 if seed is None else seed
            )
        except ApplicationError as error:
            messages.error(request, getattr(error, "message", str(error)))
            return redirect("probes:run_list")
        return redirect("probes:run_detail", run.pk)
    runs = Paginator(CompileRun.objects.all(), 25).get_page(request.GET.get("page"))
    rows = [(run, run_state(run)) for run in runs]
    return TemplateResponse(
        request, "probes/run_list.html", {"page": runs, "rows": rows, "nav_section": "compile"}
    )


@login_required
@require_GET
@require(can_manage_probes)
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(CompileRun, pk=run_id)
    running = run.status in (CompileRun.Status.QUEUED, CompileRun.Status.RUNNING)
    context = {
        "run": run,
        "running": running,
        "state": run_state(run),
        "count_rows": count_rows(run.counts),
        "timing_rows": timing_rows(run.timings),
        "groups": [] if running else issues_by_code(run),
        "nav_section": "compile",
    }
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    template = "probes/run_detail.html#progress" if htmx else "probes/run_detail.html"
    return TemplateResponse(request, template, context)


@login_required
@require_GET
@require(can_manage_probes)
def probe_browser(request: HttpRequest) -> HttpResponse:
    filters = {k: request.GET.get(k, "") for k in ("interface", "state", "split", "parent")}
    page = Paginator(probe_list(**filters), 50).get_page(request.GET.get("page"))
    return TemplateResponse(
        request,
        "probes/probe_list.html",
        {
            "page": page,
            "filters": filters,
            "interfaces": INTERFACES,
            "states": Probe.State.choices,
            "splits": Probe.Split.choices,
            "nav_section": "probes",
        },
    )


@login_required
@require_GET
@require(can_manage_probes)
def probe_detail(request: HttpRequest, logical_probe_id: str) -> HttpResponse:
    probe = get_object_or_404(
        Probe.objects.select_related("parent", "key"), logical_probe_id=logical_probe_id
    )
    condition = "gold" if request.GET.get("condition") == "gold" else "raw"
    show_private = may_show_targets(request.user, where="page:probe", probes=probe_parent_pairs([probe]))
    return TemplateResponse(
        request,
        "probes/probe_detail.html",
        {
            "probe": probe,
            "condition": condition,
            "messages_shown": probe.gold_messages if condition == "gold" else probe.raw_messages,
            "show_private": show_private,
            "key": probe.key.key if show_private else None,
            "gold_aliases": probe.key.gold_aliases if show_private else None,
            "nav_section": "probes",
        },
    )


@login_required
@require_GET
@require(can_manage_probes)
def probe_attachment(request: HttpRequest, logical_probe_id: str, asset_id: str) -> HttpResponse:
    """The exact bytes a model receives for one attachment (a rendered view or an original)."""
    attachment = attachment_of(get_object_or_404(Probe, logical_probe_id=logical_probe_id), asset_id)
    if attachment is None:
        raise Http404
    try:
        data = attachment.read()
    except FileNotFoundError as exc:
        raise Http404("The attachment's file is missing from the media storage.") from exc
    return HttpResponse(data, content_type=attachment.media_type)


@login_required
@require_GET
@require(can_manage_probes)
def release_list(request: HttpRequest) -> HttpResponse:
    return TemplateResponse(
        request,
        "probes/release_list.html",
        {"releases": Release.objects.all()[:100], "nav_section": "releases"},
    )
