"""A release's public zip: queued for a worker, and found once built."""

from __future__ import annotations

from functools import partial
from typing import IO, Any

from django.db import transaction

from audit.services import event_record

from ..models import Release
from ..release_store import artifact_exists, artifact_open


def release_zip_queue(*, release: Release, actor: Any) -> Release:
    """Queue the public zip of a release (built by a worker, progress in ``zip_progress``).

    A zip being built is left alone; a ready one whose file is gone is built again. The page and the API both
    call this, so a download is built the same way whoever asks.
    """
    from ..tasks import release_zip_task  # the tasks module imports this package

    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.zip_status in ("queued", "running"):
            return release
        Release.objects.filter(pk=release.pk).update(zip_status="queued", zip_progress=0)
        event_record(actor=actor, verb="release.zip_queued", obj=release)
        transaction.on_commit(partial(release_zip_task.delay, release_pk=release.pk))
    release.refresh_from_db()
    return release


def release_zip_ready(release: Release) -> bool:
    """Whether the release's public zip is built and still there (beside the folder or in the bucket)."""
    return release.zip_status == "ready" and artifact_exists(release.zip_path)


def release_zip_open(release: Release) -> IO[bytes] | None:
    """The built public zip of a release open for reading, or None while it is not built (or its file went
    missing)."""
    return artifact_open(release.zip_path) if release.zip_status == "ready" else None
