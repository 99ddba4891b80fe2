"""Import uploads and their reports, row by row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError

from ..exporters.jobs import can_export_workspace
from ..forms import ImportUploadForm
from ..importers import import_job_create
from ..models import ImportJob
from ..permissions import (
    can_import,
)
from .rendering import RECENT_IMPORTS, page_render


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
                # A refused change (what the file asked for and the uploader may not change) is shown first.
                warnings=_messages(raw.get("refused")) + _messages(raw.get("warnings")),
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
        {
            "form": form,
            "jobs": jobs,
            "nav_section": "imports",
            "can_export": can_export_workspace(request.user),
        },
        status=status,
    )


@login_required
@require_GET
@require(can_import)
def import_detail(request: HttpRequest, job_id: int) -> TemplateResponse:
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), pk=job_id)
    return page_render(request, "annotation/import_detail.html", "job", _job_context(job))
