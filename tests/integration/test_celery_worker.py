from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.importers import import_job_create
from annotation.models import ImportJob, ParentProblem, ProblemImage

REAL = Path(__file__).resolve().parents[2] / "demo_data" / "real_physics"

pytestmark = pytest.mark.integration


def _zip_of_real_fixtures(count: int) -> bytes:
    lines = (REAL / "manifest.jsonl").read_text(encoding="utf-8").splitlines()[:count]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("upload/manifest.jsonl", "\n".join(lines) + "\n")
        for n in range(1, count + 1):
            name = f"images/ostx_up_{n:03d}.jpg"
            archive.write(REAL / name, f"upload/{name}")
    return buffer.getvalue()


def test_uploaded_import_runs_on_a_real_worker(celery_worker_process, annotator):
    upload = SimpleUploadedFile("five.zip", _zip_of_real_fixtures(5), content_type="application/zip")
    job = import_job_create(kind="problems", upload=upload, actor=annotator)

    deadline = time.monotonic() + 60
    while True:
        job.refresh_from_db()
        if job.status in (ImportJob.Status.SUCCEEDED, ImportJob.Status.FAILED) or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    assert job.status == ImportJob.Status.SUCCEEDED, job.report
    assert (job.done, job.total) == (5, 5)
    assert job.report["counts"]["created"] == 5
    assert ParentProblem.objects.count() == 5
    assert ProblemImage.objects.count() == 5
