"""Kit workspace exports: ask for one, watch it build, download the zip (admins only)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError

from ..exporters.jobs import can_export_workspace, workspace_export_create, workspace_export_download
from ..forms import WorkspaceExportForm
from ..models import Source, WorkspaceExport
from .rendering import page_render

RECENT_EXPORTS = 20
SUMMARY_LABELS = {
    "problems": "Problems",
    "images": "Images",
    "pass_files": "Pass files",
    "approved_stages": "Approved stages",
    "rejected_stages": "Rejected stages",
    "excluded": "Excluded",
    "skipped_not_approved": "Left out (not approved)",
    "files": "Files",
    "bytes": "Bytes",
}


@login_required
@require_http_methods(["GET", "POST"])
@require(can_export_workspace)
def export_list(request: HttpRequest) -> HttpResponse:
    form = WorkspaceExportForm(
        request.POST or None, sources=list(Source.objects.values_list("name", flat=True))
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                job = workspace_export_create(actor=request.user, **form.cleaned_data)
            except ApplicationError as exc:
                form.add_error("problem_ids" if exc.code == "PARENT_UNKNOWN" else None, exc.message)
            else:
                return redirect("annotation:export_detail", job_id=job.pk)
        status = 400
    jobs = WorkspaceExport.objects.select_related("created_by")[:RECENT_EXPORTS]
    return TemplateResponse(
        request,
        "annotation/export_list.html",
        {"form": form, "jobs": jobs, "nav_section": "imports"},
        status=status,
    )


def _job_context(job: WorkspaceExport) -> dict[str, Any]:
    running = job.status in (WorkspaceExport.Status.QUEUED, WorkspaceExport.Status.RUNNING)
    percent = round(100 * job.done / job.total) if job.total else 0
    summary = job.summary if isinstance(job.summary, dict) else {}
    counts = [(label, summary[key]) for key, label in SUMMARY_LABELS.items() if key in summary]
    return {
        "job": job,
        "running": running,
        "percent": min(percent, 100),
        "counts": counts,
        "nav_section": "imports",
    }


@login_required
@require_GET
@require(can_export_workspace)
def export_detail(request: HttpRequest, job_id: int) -> TemplateResponse:
    job = get_object_or_404(WorkspaceExport.objects.select_related("created_by"), pk=job_id)
    return page_render(request, "annotation/export_detail.html", "job", _job_context(job))


@login_required
@require_GET
@require(can_export_workspace)
def export_download(request: HttpRequest, job_id: int) -> HttpResponseBase:
    job = get_object_or_404(WorkspaceExport, pk=job_id)
    try:
        handle = workspace_export_download(job=job, actor=request.user)
    except ApplicationError as exc:
        return TemplateResponse(
            request,
            "annotation/export_detail.html",
            {**_job_context(job), "error": exc.message},
            status=exc.status_code,
        )
    return FileResponse(
        handle, as_attachment=True, filename=f"kit_workspace_{job.pk}.zip", content_type="application/zip"
    )
