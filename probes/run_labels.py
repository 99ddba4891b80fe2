"""Compile-run counts, timings and state in words for the pages: "Candidate parents (unassigned, not for
release)" instead of ``split_candidate_unassigned_not_release``, "Render time (s)" instead of ``render_s``,
and "Queued — waiting for a worker" instead of "Queued · 0/0"."""

from __future__ import annotations

from typing import Any, NamedTuple

from .models import CompileRun

COUNT_LABELS = {
    "parents": "Parent problems compiled",
    "probes": "Probes",
    "blocked_groups": "Blocked groups",
    "T02-single": "T02-single probes (one image region)",
    "T03-image": "T03-image probes (read and bind in the image)",
    "T03-text": "T03-text probes (bind a text mention)",
    "split_development_reserved": "Development parents (reserved)",
    "split_candidate_unassigned_not_release": "Candidate parents (unassigned, not for release)",
    "split_blocked": "Blocked parents",
}
TIMING_LABELS = {
    "load_s": "Load time (s)",
    "compile_s": "Compile time (s)",
    "render_s": "Render time (s)",
    "db_s": "Database time (s)",
    "store_s": "View storage time (s)",
}


class LabelledValue(NamedTuple):
    key: str
    label: str
    value: Any


def humanize_key(key: str) -> str:
    """A fallback for a key without a label: ``foo_bar_s`` → "Foo bar (s)"."""
    unit = ""
    if key.endswith("_s"):
        key, unit = key[:-2], " (s)"
    words = key.replace("_", " ").strip()
    return (words[:1].upper() + words[1:] + unit) if words else key


def count_rows(counts: dict[str, Any]) -> list[LabelledValue]:
    known = [k for k in COUNT_LABELS if k in counts]
    rest = sorted(k for k in counts if k not in COUNT_LABELS)
    return [LabelledValue(k, COUNT_LABELS.get(k) or humanize_key(k), counts[k]) for k in (*known, *rest)]


def timing_rows(timings: dict[str, Any]) -> list[LabelledValue]:
    known = [k for k in TIMING_LABELS if k in timings]
    rest = sorted(k for k in timings if k not in TIMING_LABELS)
    rows = []
    for key in (*known, *rest):
        value = timings[key]
        shown = f"{value:.2f}" if isinstance(value, float) else value
        rows.append(LabelledValue(key, TIMING_LABELS.get(key) or humanize_key(key), shown))
    return rows


def run_state(run: CompileRun) -> str:
    """The run's state in one phrase; no "0/0" before the worker has counted the parents."""
    if run.status == CompileRun.Status.QUEUED and not run.total:
        return "Queued — waiting for a worker"
    if run.status == CompileRun.Status.RUNNING and not run.total:
        return "Running — counting the parents"
    text = f"{run.get_status_display()} · {run.done}/{run.total} parents"
    if run.status == CompileRun.Status.RUNNING and run.chunks_total > 1:
        text += f" · {run.chunks_done}/{run.chunks_total} chunks done"
    return text
