"""Import jobs: an upload checked, stored and queued for Celery, then run."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from audit.services import event_record
from physalign_site.errors import ApplicationError

from ..models import ImportJob
from .kit import import_kit_workspace
from .problems import import_problems_manifest
from .progress import import_job_discard_upload, import_job_fail
from .report import FAILED, SUCCEEDED
from .zips import checked_zip_members, extract_zip, find_root


@transaction.atomic
def import_job_create(*, kind: str, upload: UploadedFile, actor: Any) -> ImportJob:
    """Accept a .zip upload for ``kind`` and queue its import. The archive is checked here, before
    anything is queued: a readable zip within the size caps, safe entry names, no symlinks, and the
    expected layout (``manifest.jsonl``, or a kit workspace's ``blind/manifest.jsonl``, at the root
    or in one top-level folder)."""
    if kind not in ImportJob.Kind.values:
        raise ApplicationError(f"Unknown import kind {kind!r}.", code="import_kind_invalid")
    max_bytes = settings.PHYSALIGN_IMPORT_MAX_BYTES
    name = Path(upload.name or "upload.zip").name
    if upload.size is not None and upload.size > max_bytes:
        raise ApplicationError(
            f"The upload is {upload.size:,} bytes; the limit is {max_bytes:,}.",
            code="import_too_large",
            status=413,
        )
    if not name.lower().endswith(".zip"):
        raise ApplicationError("Upload a .zip archive.", code="import_not_zip")
    upload.seek(0)
    try:
        with zipfile.ZipFile(upload) as archive:
            members = checked_zip_members(archive)
            find_root((info.filename for info in members), kind)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise ApplicationError("The upload is not a readable .zip archive.", code="import_not_zip") from exc
    upload.seek(0)
    job = ImportJob(
        kind=kind,
        original_name=name[:300],
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    job.upload.save(name, upload, save=False)
    job.save()
    event_record(
        actor=actor,
        verb="import_job.created",
        obj=job,
        after={"kind": kind, "original_name": job.original_name, "size": upload.size},
    )
    from ..tasks import import_job_run_task  # the tasks module imports this package

    transaction.on_commit(partial(import_job_run_task.delay, job.pk))
    return job


def import_job_run(*, job_id: int) -> ImportJob:
    """Run a queued upload: extract it to a temporary folder, import it, clean up.

    Safe to run twice (the task is acks_late): a finished job is left alone, and the importers are
    idempotent. A refused archive marks the job failed with the reason.
    """
    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ).update(status=ImportJob.Status.RUNNING)
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    if not claimed:
        return job
    try:
        _run_upload(job)
    finally:
        job.refresh_from_db(fields=["status"])
        if job.status in (SUCCEEDED, FAILED):
            import_job_discard_upload(job=job)
    return job


def _run_upload(job: ImportJob) -> None:
    with tempfile.TemporaryDirectory(prefix="physalign-import-") as scratch:
        scratch_path = Path(scratch)
        archive_path = scratch_path / "upload.zip"
        with job.upload.open("rb") as source, open(archive_path, "wb") as sink:
            shutil.copyfileobj(source, sink)
        extracted = scratch_path / "files"
        extracted.mkdir()
        try:
            extract_zip(archive_path, extracted)
            with zipfile.ZipFile(archive_path) as archive:
                root = find_root(archive.namelist(), job.kind)
        except (ApplicationError, zipfile.BadZipFile) as exc:
            import_job_fail(job=job, message=getattr(exc, "message", str(exc)), code="IMPORT_ARCHIVE_REFUSED")
            return
        folder = extracted / root if root else extracted
        if job.kind == ImportJob.Kind.PROBLEMS:
            import_problems_manifest(manifest_path=folder / "manifest.jsonl", actor=job.created_by, job=job)
        else:
            import_kit_workspace(workspace=folder, actor=job.created_by, job=job, confine_to=extracted)
