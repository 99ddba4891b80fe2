"""A scored run's item file (JSONL, the contract of ``manage.py metrics``), kept in the media storage.

It is written once, from the same pass over the rows that computes the metrics (``results.metrics_store``,
so when a run is scored and when it is rescored), and served as a file thereafter. A run scored before
item files were kept gets its file built on its first download, once (``item_file_open``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.core.files import File
from django.core.files.storage import Storage
from django.db import transaction

from ..models import EvalRun

CHUNK_BYTES = 1 << 16


def item_line(item: dict[str, Any]) -> bytes:
    """One record of the item file: its JSON (keys in ``run_items`` order, non-ASCII kept) and a newline."""
    return (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8")


def item_lines(items: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The item file's bytes, a few records at a time (a streamed download of a run still running)."""
    buffer: list[bytes] = []
    size = 0
    for item in items:
        line = item_line(item)
        buffer.append(line)
        size += len(line)
        if size >= CHUNK_BYTES:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


def _storage() -> Storage:
    return EvalRun._meta.get_field("items_file").storage  # type: ignore[attr-defined]  # a FileField


def item_file_store(run: EvalRun, spool: IO[bytes]) -> str:
    """Save the item file written to ``spool`` as the run's (replacing its previous one once the caller's
    transaction commits). Returns its storage name."""
    storage = _storage()
    spool.seek(0)
    name = storage.save(f"eval_runs/run-{run.pk}-items.jsonl", File(spool))
    old = EvalRun.objects.filter(pk=run.pk).values_list("items_file", flat=True).get()
    EvalRun.objects.filter(pk=run.pk).update(items_file=name)
    run.items_file.name = name
    if old and old != name:
        transaction.on_commit(lambda: storage.delete(old))
    return name


def item_file_open(run: EvalRun, build: Callable[[EvalRun], str]) -> IO[bytes]:
    """The run's stored item file, open for reading; built with ``build`` first when the run has
    none yet (or its file went missing). Two first downloads at once build it once: the second waits on the
    run row's lock and then finds the file."""
    storage = _storage()
    name = run.items_file.name
    if not (name and storage.exists(name)):
        with transaction.atomic():
            locked = EvalRun.objects.select_for_update().get(pk=run.pk)
            name = locked.items_file.name
            if not (name and storage.exists(name)):
                name = build(locked)
    return storage.open(name, "rb")
