"""Kit workspace exports built by a worker: asked for on a page or the API, built into a zip with progress, stored
through the media storage (a local folder or S3), downloaded by admins.

The zip holds the private answers sidecar and every reviewer's name, so asking, watching and downloading are
for admins only (``can_export_workspace``); each download is in the audit log. A failed build stores no file:
the zip is written to a temporary folder and saved to the storage only once it is whole.
"""

from __future__ import annotations

import hashlib
import tempfile
import zipfile
from functools import partial
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db import transaction
from django.utils import timezone

from audit.services import event_record
from physalign_site.errors import ApplicationError
from physalign_site.roles import is_admin

from ..models import WorkspaceExport
from .kit_workspace import check_selection, export_kit_workspace

PROGRESS_EVERY = 10  # write progress at most once per this many problems (and at the end)
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}  # already compressed: stored as they are


def can_export_workspace(user: Any) -> bool:
    """The workspace holds answers, solutions and reviewer names: admins only."""
    return is_admin(user)


def _require_exporter(actor: Any) -> None:
    if not can_export_workspace(actor):
        raise ApplicationError(
            "Only admins may export the annotation work (it holds the private answers).",
            code="WORKSPACE_EXPORT_FORBIDDEN",
            status=403,
        )


@transaction.atomic
def workspace_export_create(
    *, actor: Any, source: str = "", problem_ids: list[str] | None = None, approved_only: bool = False
) -> WorkspaceExport:
    """Check the selection (a known source, known problem ids) and queue the build."""
    _require_exporter(actor)
    ids = sorted(set(problem_ids or []))
    check_selection(source or None, ids or None)
    job = WorkspaceExport.objects.create(
        source=source,
        problem_ids=ids,
        approved_only=approved_only,
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    event_record(
        actor=actor,
        verb="workspace_export.created",
        obj=job,
        after={"source": source, "problem_ids": len(ids), "approved_only": approved_only},
    )
    from ..tasks import workspace_export_task  # the tasks module imports this package

    transaction.on_commit(partial(workspace_export_task.delay, job.pk))
    return job


def workspace_export_run(*, job_id: int) -> WorkspaceExport:
    """Build a queued export. Safe to run twice (the task is acks_late): a finished job is left alone."""
    claimed = WorkspaceExport.objects.filter(
        pk=job_id, status__in=[WorkspaceExport.Status.QUEUED, WorkspaceExport.Status.RUNNING]
    ).update(status=WorkspaceExport.Status.RUNNING, done=0)
    job = WorkspaceExport.objects.get(pk=job_id)
    if not claimed:
        return job

    def progress(done: int, total: int) -> None:
        if done == total or done % PROGRESS_EVERY == 0:
            WorkspaceExport.objects.filter(pk=job_id).update(done=done, total=total)

    try:
        with tempfile.TemporaryDirectory(prefix="physalign-workspace-export-") as scratch:
            folder = Path(scratch) / "workspace"
            summary = export_kit_workspace(
                output=folder,
                source=job.source or None,
                problem_ids=job.problem_ids or None,
                approved_only=job.approved_only,
                progress=progress,
            )
            archive = Path(scratch) / "workspace.zip"
            sha256, size = _zip_folder(folder, archive, top=f"kit_workspace_{job.pk}")
            with archive.open("rb") as handle:
                job.file.save(f"kit_workspace_{job.pk}.zip", File(handle), save=False)
    except Exception as exc:
        message = exc.message if isinstance(exc, ApplicationError) else f"The export stopped: {exc}"
        workspace_export_fail(job=job, message=message)
        return job
    job.status, job.summary, job.sha256, job.byte_size = (
        WorkspaceExport.Status.READY,
        summary.as_dict(),
        sha256,
        size,
    )
    job.done = job.total = summary.problems
    job.finished_at = timezone.now()
    job.save(
        update_fields=["status", "summary", "sha256", "byte_size", "done", "total", "file", "finished_at"]
    )
    return job


def workspace_export_fail(*, job: WorkspaceExport, message: str) -> None:
    WorkspaceExport.objects.filter(pk=job.pk).update(
        status=WorkspaceExport.Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )
    job.refresh_from_db()


def _zip_folder(folder: Path, archive: Path, *, top: str) -> tuple[str, int]:
    """Zip every file of ``folder`` under one top-level folder, in sorted order with fixed timestamps (the same
    workspace gives the same zip); images are stored, JSON deflated."""
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = f"{top}/{path.relative_to(folder).as_posix()}"
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = (
                zipfile.ZIP_STORED if path.suffix.lower() in IMAGE_SUFFIXES else zipfile.ZIP_DEFLATED
            )
            info.external_attr = 0o644 << 16
            out.writestr(info, path.read_bytes())
    digest = hashlib.sha256()
    with archive.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest(), archive.stat().st_size


def workspace_export_download(*, job: WorkspaceExport, actor: Any) -> Any:
    """The stored zip, opened for reading, for an admin; the download is in the audit log."""
    _require_exporter(actor)
    if job.status != WorkspaceExport.Status.READY or not job.file:
        raise ApplicationError("This export has no zip (yet).", code="WORKSPACE_EXPORT_NOT_READY", status=409)
    try:
        handle = job.file.open("rb")
    except (FileNotFoundError, OSError) as exc:
        raise ApplicationError(
            "The export's zip is no longer in the media storage; build the export again.",
            code="WORKSPACE_EXPORT_FILE_MISSING",
            status=410,
        ) from exc
    event_record(actor=actor, verb="workspace_export.downloaded", obj=job, after={"sha256": job.sha256})
    return handle
