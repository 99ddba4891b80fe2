"""An import job's progress and its end (written outside the import's transaction, so others can watch it)."""

from __future__ import annotations

from django.utils import timezone

from ..models import ImportJob
from .report import FAILED, ImportReport


def job_start(job: ImportJob | None, *, total: int) -> None:
    if job is None:
        return
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, total=total, done=0)
    job.status, job.total, job.done = ImportJob.Status.RUNNING, total, 0


def job_progress(job: ImportJob | None, *, done: int) -> None:
    if job is None:
        return
    ImportJob.objects.filter(pk=job.pk).update(done=done)
    job.done = done


def job_finish(job: ImportJob | None, report: ImportReport) -> None:
    if job is None:
        return
    finished_at = timezone.now()
    done = len(report.rows) if report.succeeded else job.done
    ImportJob.objects.filter(pk=job.pk).update(
        status=report.status, report=report.as_dict(), finished_at=finished_at, done=done
    )
    job.status, job.report, job.finished_at, job.done = report.status, report.as_dict(), finished_at, done


def import_job_fail(*, job: ImportJob, message: str, code: str = "IMPORT_FAILED") -> None:
    """Mark a job failed with one file-level error, keeping any report rows it already has."""
    report = dict(job.report or {})
    report.setdefault("kind", job.kind)
    report["status"] = FAILED
    report.setdefault("rows", [])
    report["errors"] = [*report.get("errors", []), {"code": code, "message": message}]
    finished_at = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(status=FAILED, report=report, finished_at=finished_at)
    job.status, job.report, job.finished_at = FAILED, report, finished_at
    import_job_discard_upload(job=job)


def import_job_discard_upload(*, job: ImportJob) -> None:
    """An upload is kept only while its job runs: once it has ended (imported or not) the file goes."""
    if job.upload.name:  # FieldFile truthiness is its name's
        job.upload.storage.delete(job.upload.name)
        ImportJob.objects.filter(pk=job.pk).update(upload="")
        job.upload.name = ""
