"""``media_prune``: stored files no row names (left by a recompile, a replaced image, an interrupted export).

It lists every file of every storage the file fields use (through the storage API, so a bucket is listed like a
folder), keeps what :func:`~home.backups.references.media_references` names (a release folder on the storage's
disk included), keeps what is younger than ``min_age`` (a file is written before the row that names it
commits: an import, a compile or a release export may be writing right now) and removes the rest, unless
``dry_run``. While a compile run is queued or running nothing is removed: it may pick up an existing rendered
view by its name (content-addressed views are reused, not rewritten) between the listing and its commit.
The references are read once more just before removing, and a file named by then is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.files.storage import Storage
from django.utils import timezone

from physalign_site.errors import ApplicationError

from .references import distinct_storages, field_storage, local_storage_name, media_references, storage_walk


@dataclass(frozen=True)
class Orphan:
    name: str
    size: int
    modified: datetime


@dataclass
class PruneReport:
    orphans: list[Orphan] = field(default_factory=list)  # removed (or, on a dry run, to remove)
    young: list[Orphan] = field(default_factory=list)  # not named by a row, but too recent to judge
    kept: int = 0  # files a row names
    dry_run: bool = True

    @property
    def orphan_bytes(self) -> int:
        return sum(orphan.size for orphan in self.orphans)


def _referenced(storage: Storage) -> set[str]:
    refs = media_references()
    names = {ref.name for ref in refs.stored if field_storage(ref.field) is storage}
    for release in refs.releases:
        for _field, path in release.files():
            if (name := local_storage_name(storage, path)) is not None:
                names.add(name)
    return names


def _require_no_compile_running() -> None:
    from probes.models import CompileRun

    active = CompileRun.objects.filter(status__in=[CompileRun.Status.QUEUED, CompileRun.Status.RUNNING])
    if run := active.order_by("pk").first():
        raise ApplicationError(
            f"Compile run {run.pk} is {run.status}: it may reuse a stored view while files are removed. "
            "Run media_prune when it has finished (or with --dry-run to list).",
            code="prune_compile_running",
        )


def media_prune(
    *,
    dry_run: bool,
    min_age: timedelta = timedelta(minutes=60),
    progress: Callable[[str], None] = lambda _: None,
) -> PruneReport:
    """List (and unless ``dry_run`` remove) the stored files no row names and older than ``min_age``."""
    if not dry_run:
        _require_no_compile_running()
    report = PruneReport(dry_run=dry_run)
    cutoff = timezone.now() - min_age
    for storage, _labels in distinct_storages():
        referenced = _referenced(storage)
        candidates: list[Orphan] = []
        for name in storage_walk(storage):
            if name in referenced:
                report.kept += 1
                continue
            orphan = Orphan(name, storage.size(name), storage.get_modified_time(name))
            (candidates if orphan.modified <= cutoff else report.young).append(orphan)
        if not dry_run and candidates:
            named_now = _referenced(storage)  # a row committed since the listing keeps its file
            candidates = [orphan for orphan in candidates if orphan.name not in named_now]
            progress(f"removing {len(candidates):,} files")
            for orphan in candidates:
                storage.delete(orphan.name)
        report.orphans += candidates
    return report
