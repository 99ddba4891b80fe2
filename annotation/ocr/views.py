"""The OCR runs page: admins start a run over every problem of a source and watch it (htmx polling)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError

from ..models import OcrRun, Source
from ..views.rendering import page_render
from .permissions import can_run_ocr_for_source
from .services import ocr_run_create

RECENT_RUNS = 20


@login_required
@require_http_methods(["GET", "POST"])
@require(can_run_ocr_for_source)
def ocr_runs(request: HttpRequest) -> HttpResponse:
    error = ""
    status = 200
    if request.method == "POST":
        raw = request.POST.get("source_id", "")
        source = Source.objects.filter(pk=int(raw)).first() if raw.isascii() and raw.isdigit() else None
        if source is None:
            error, status = "Choose a source.", 400
        else:
            try:
                ocr_run_create(actor=request.user, source=source)
            except ApplicationError as exc:
                error, status = exc.message, exc.status_code
            else:
                return redirect("ocr:runs")
    sources = Source.objects.annotate(problem_count=Count("problems", distinct=True)).order_by("name")
    runs = list(OcrRun.objects.select_related("source", "parent", "created_by")[:RECENT_RUNS])
    running = any(r.status in (OcrRun.Status.QUEUED, OcrRun.Status.RUNNING) for r in runs)
    response = page_render(
        request,
        "annotation/ocr_runs.html",
        "runs",
        {"sources": sources, "runs": runs, "running": running, "error": error, "nav_section": "ocr_runs"},
    )
    response.status_code = status
    return response
