"""An inspect_ai log stored as an evaluation run: ``manage.py import_inspect_log``.

The log of ``physalign_studio.inspect_task:physalign`` (any model) becomes one completed ``EvalRun``: one
``EvalRequest`` per sample (the probe by its logical id, the condition of the task's arguments) with the raw
output text, the finish reason, the tokens the log counted and the sample's time, scored by the app's own path
(``scores.score_of``: the probe's key in the database) and finalized like a run the app executed
(``results.eval_run_finalize``: metric snapshots and the item file), so the run pages, dashboards and
``manage.py metrics`` read it like any other. The outputs are read as the inspect scorer reads them
(``evaluation.inspect_outputs``), so where the log carries inspect's scores they agree item by item; the import
counts the agreement and names any difference.

The model is a ``ModelConfig`` that never calls anything: an existing config named with ``model_name``, else
``inspect-<model>``, created inactive (no run can plan it) with the ``scripted`` provider and no script (a call,
were one ever made, is refused before anything is sent).

A log is identified by its content, not by what it says about itself: the SHA-256 of the file's bytes is kept
in the run's options (``inspect_log_sha256``, unique: migration 0010), and importing the same file again is
refused, naming the run that holds it. The ``eval_id`` inside the log is recorded, but two
different logs that claim one eval id are two runs (a log cannot block another's import by claiming its id).

Every value the import writes or looks up is checked before anything is written, and a log with one the
database cannot hold is refused with the sample and the field named: texts free of the NUL character and of
unpaired surrogates (refused rather than altered, so the stored output is the one inspect scored), token counts
and times within their integer columns, times finite, costs within the cost column, sizes bounded
(``MAX_OUTPUT_CHARS``, ``MAX_TEXT_CHARS``). The import is one transaction: a refused log leaves nothing behind,
and a database error that still got through is reported as a refusal, never as a traceback. Of each sample only
the text, tokens and scores are kept (not its images or events).

This module reads the log and checks every value; ``inspect_log_run`` writes the checked log as the run.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import DataError, IntegrityError, connection, transaction
from django.utils import timezone

from llm.types import Usage
from physalign_site import jsonsafety

from ..inspect_outputs import inspect_response
from ..models import EvalRun
from ..scoring import CONDITIONS
from .inspect_log_run import (
    REQUEST_COST_LIMIT,
    RUN_COST_LIMIT,
    SOURCE,
    CheckedLog,
    InspectImport,
    InspectLogError,
    LoggedSample,
    _refused,
    _shown,
    inspect_log_store,
)

SCORER = "physalign_scorer"
# the task argument that names the key file: a local path, not recorded
_PRIVATE_ARGS = ("private",)
# the unique index on the run's ``options -> 'inspect_log_sha256'`` (migration 0010)
SHA256_INDEX = "eval_run_inspect_log_sha256_uniq"
# the largest value of an integer column (PostgreSQL ``integer``): a request's tokens and latency in ms, a
# config's max output tokens
INT_MAX = 2**31 - 1
# sizes: a model's output (a million characters is ~250k tokens), a sample id, a name, an eval id, a model
MAX_OUTPUT_CHARS = 1_000_000
MAX_TEXT_CHARS = 200
# the JSON of the log's header that the run's manifest keeps (task arguments, task, model, …)
MAX_HEADER_STRING = 10_000
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _file(path: Path) -> str:
    """The file's name as a message or the manifest shows it (a name that is not UTF-8 has surrogates)."""
    return jsonsafety.storable_text(path.name)


def _number(value: int | float) -> str:
    return f"{value:,}" if abs(value) < 10**30 else "a number of more than 30 digits"


def _text(value: Any, where: str, name: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """``value`` if it is a text a text column can hold (no NUL, no unpaired surrogate) of at most
    ``max_chars`` characters, else the refusal naming ``where`` and ``name``."""
    if not isinstance(value, str):
        raise _refused(where, name, f"is {type(value).__name__} {_shown(value)}, not a text")
    if len(value) > max_chars:
        raise _refused(where, name, f"is {len(value):,} characters long, more than the {max_chars:,} allowed")
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        what = (
            "the NUL character \\u0000"
            if bad.group() == "\x00"
            else f"an unpaired surrogate \\u{ord(bad.group()):04x}"
        )
        raise _refused(
            where, name, f"contains {what} (at character {bad.start():,}), which the database cannot store"
        )
    return value


def _count(value: Any, where: str, name: str, maximum: int = INT_MAX) -> int:
    """``value`` if it is a whole number from 0 to ``maximum`` (an integer column's range)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refused(where, name, f"is {_shown(value)}, not a whole number")
    if not 0 <= value <= maximum:
        raise _refused(where, name, f"is {_number(value)}, outside 0 to {maximum:,}")
    return value


def _seconds(value: Any, where: str, name: str) -> float | None:
    """A duration in seconds that the latency column (milliseconds, an integer) holds: finite, from 0 to
    ``INT_MAX`` ms (24.8 days)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _refused(where, name, f"is {_shown(value)}, not a finite number of seconds")
    if not 0 <= value * 1000 <= INT_MAX:
        raise _refused(where, name, f"is {_number(value)} seconds, outside 0 to {INT_MAX / 1000:,.3f}")
    return float(value)


def _when(value: Any, where: str = "the log", name: str = "a time") -> datetime | None:
    if not value:
        return None
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        return (moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, TypeError, OverflowError):
        raise _refused(where, name, f"is {_shown(value)}, not a date and time") from None


def _invalid(path: Path, exc: Exception) -> InspectLogError:
    return InspectLogError(
        f"{_file(path)} is not an inspect_ai log "
        f"({type(exc).__name__}: {jsonsafety.storable_text(str(exc)[:300])})",
        code="inspect_log_invalid",
    )


def _sha256(path: Path) -> str:
    """The SHA-256 of the file's bytes: what identifies an imported log."""
    digest_ = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest_.update(chunk)
    return digest_.hexdigest()


def _read(path: Path) -> tuple[Any, list[LoggedSample], str]:
    """The log's header, its samples (each kept as a checked ``LoggedSample``) and the SHA-256 of the bytes that
    were read; the events, the attachments (the images) and the stores are not read."""
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise InspectLogError(
            f"no such file: {jsonsafety.storable_text(str(path))}", code="inspect_log_missing"
        )
    sha256 = _sha256(path)
    try:
        log = read_eval_log(str(path), exclude_fields={"events", "attachments", "store"})
    except Exception as exc:  # inspect raises zip, JSON and validation errors of many types
        raise _invalid(path, exc) from exc
    if _sha256(path) != sha256:
        raise InspectLogError(f"{_file(path)} changed while it was read", code="inspect_log_changed")
    return log, [_logged_sample(s) for s in log.samples or []], sha256


def _usage(sample: Any, where: str) -> Usage:
    """The tokens: the output's usage, else the sum of what the sample used per model; each count and the
    sums within a request's integer columns."""
    if sample.output.usage:
        usages = [("output.usage", sample.output.usage)]
    else:
        usages = [(f"model_usage[{_shown(model)}]", usage) for model, usage in sample.model_usage.items()]
    if not usages:
        return Usage()
    totals = {}
    for kind in ("input_tokens", "output_tokens"):
        counted = [_count(getattr(u, kind) or 0, where, f"{label}.{kind}") for label, u in usages]
        label = usages[0][0] if len(usages) == 1 else "model_usage"
        totals[kind] = _count(sum(counted), where, f"{label}.{kind}")
    return Usage(**totals)


def _logged_sample(sample: Any) -> LoggedSample:
    sample_id = str(sample.id) if isinstance(sample.id, int) else sample.id
    where = f"sample {_shown(sample_id)}"
    _text(sample_id, where, "id")
    served = sample.error is None and bool(sample.output.choices)
    completion = None
    if served and sample.output.completion is not None:
        completion = _text(sample.output.completion, where, "output.completion", MAX_OUTPUT_CHARS)
    output = inspect_response(
        served=served,
        completion=completion,
        stop_reason=sample.output.stop_reason if served else None,
    )
    messages = sample.input if isinstance(sample.input, list) else []
    user = next((m for m in messages if m.role == "user"), None)
    if user is None:
        texts: tuple[str, ...] = (sample.input,) if isinstance(sample.input, str) else ()
    elif isinstance(user.content, str):
        texts = (user.content,)
    else:
        texts = tuple(c.text for c in user.content if c.type == "text")
    error = ""
    if sample.error:  # kept as the row's error, cut to 2,000 characters
        error = _text(str(sample.error.message)[:2000], where, "error.message", 2000)
    return LoggedSample(
        id=sample_id,
        output=output,
        usage=_usage(sample, where),
        system=next((m.text for m in messages if m.role == "system"), ""),
        user_texts=texts,
        logged=_logged_score(sample, where),
        error=error,
        total_time=_seconds(sample.total_time, where, "total_time"),
        completed_at=_when(sample.completed_at, where, "completed_at"),
    )


def _condition(log: Any) -> str:
    condition = str(log.eval.task_args.get("condition", "raw"))
    if condition not in CONDITIONS:
        raise InspectLogError(
            f"the log's condition {_shown(condition)} is not one of {list(CONDITIONS)}",
            code="inspect_condition_invalid",
        )
    return condition


def _logged_release(log: Any) -> str | None:
    logged = (log.eval.metadata or {}).get("physalign_release_id")
    return _text(logged, "the log", "eval.metadata.physalign_release_id", 70) if logged else None


def _generate_config(log: Any) -> dict[str, Any]:
    """What a created config keeps of the log's generate config: max tokens within the column, a finite
    temperature."""
    generate = log.eval.model_generate_config
    max_tokens = getattr(generate, "max_tokens", None)
    temperature = getattr(generate, "temperature", None)
    if max_tokens is not None:
        _count(max_tokens, "the log", "eval.model_generate_config.max_tokens")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
    ):
        raise _refused(
            "the log",
            "eval.model_generate_config.temperature",
            f"is {_shown(temperature)}, not a finite number",
        )
    return {"max_output_tokens": max_tokens, "temperature": temperature}


def _logged_score(sample: Any, where: str) -> tuple[int | None, int | None, int | None] | None:
    found = (sample.scores or {}).get(SCORER)
    if found is None or not isinstance(found.value, dict):
        return None

    def one(name: str) -> int | None:
        value = found.value.get(name)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value not in (0, 1):
            raise _refused(where, f"scores.{SCORER}.value.{name}", f"is {_shown(value)}, not 0, 1 or NaN")
        return int(value)

    return one("C"), one("G"), one("J")


def _log_lock(sha256: str) -> None:
    """Two imports of one file at once: the second waits for the first and then finds its run."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"inspect_log:{sha256}"])


def _imported_already(path: Path, sha256: str) -> None:
    existing = EvalRun.objects.filter(options__inspect_log_sha256=sha256).first()
    if existing is not None:
        raise InspectLogError(
            f"this log ({_file(path)}, sha256 {sha256[:16]}…) is already run {existing.pk} ({existing})",
            code="inspect_log_imported",
        )


def _header(log: Any, path: Path, sha256: str, name: str, condition: str) -> tuple[str, str, dict[str, Any]]:
    """The log's eval id, the run's name and what the run's manifest keeps of the header, each checked."""
    eval_id = _text(log.eval.eval_id or "", "the log", "eval.eval_id")
    if not eval_id:
        raise InspectLogError(f"{_file(path)} has no eval id", code="inspect_log_invalid")
    model = _text(log.eval.model, "the log", "eval.model", MAX_HEADER_STRING)
    task = _text(log.eval.task, "the log", "eval.task", MAX_HEADER_STRING)
    if name:
        _text(name, "the options", "--name")
    args = {k: v for k, v in log.eval.task_args.items() if k not in _PRIVATE_ARGS}
    imported = {
        "from": SOURCE,
        "log": _file(path),
        "sha256": sha256,
        "eval_id": eval_id,
        "run_id": log.eval.run_id,
        "task": task,
        "task_args": args,
        "model": model,
        "created": str(log.eval.created),
        "status": log.status,
        "inspect_version": (log.eval.packages or {}).get("inspect_ai"),
    }
    try:
        jsonsafety.check(imported, max_string=MAX_HEADER_STRING)
        json.dumps(imported, allow_nan=False)  # e.g. an integer of more than 4,300 digits
    except jsonsafety.JSONRejected as exc:
        raise InspectLogError(
            f"the log's header cannot be kept in the run's manifest: {exc.message} "
            "The log is refused and nothing was imported.",
            code="inspect_log_value_invalid",
        ) from None
    except (ValueError, TypeError) as exc:
        raise InspectLogError(
            f"the log's header cannot be kept in the run's manifest ({type(exc).__name__}: "
            f"{jsonsafety.storable_text(str(exc)[:200])}). The log is refused and nothing was imported.",
            code="inspect_log_value_invalid",
        ) from None
    return eval_id, name or f"inspect {task} {model} {condition}"[:200], imported


def inspect_log_import(
    *,
    path: Path,
    name: str = "",
    release_id: str | None = None,
    model_name: str | None = None,
    actor: Any = None,
) -> InspectImport:
    if release_id:
        _text(release_id, "the options", "--release", 70)
    if model_name:
        _text(model_name, "the options", "--model", 100)
    checked = _checked(path, name)
    try:
        with transaction.atomic():
            _log_lock(checked.sha256)
            _imported_already(path, checked.sha256)
            return inspect_log_store(checked, release_id=release_id, model_name=model_name, actor=actor)
    except IntegrityError as exc:
        if SHA256_INDEX in str(exc):  # another import of this file committed first
            _imported_already(path, checked.sha256)
        raise _unstorable(path, exc) from exc
    except DataError as exc:  # not reached: every value was checked; a refusal all the same, not a traceback
        raise _unstorable(path, exc) from exc


def _checked(path: Path, name: str) -> CheckedLog:
    """Read the log and check everything the run is made of, before anything is written."""
    log, samples, sha256 = _read(path)
    log.samples = None  # only the kept parts of the samples stay in memory
    _imported_already(path, sha256)  # early, without the lock; checked again under it
    if log.status != "success":
        raise InspectLogError(
            f"the eval of {_file(path)} ended {log.status}, not success: only a finished eval is a run "
            "(finish it with inspect eval-retry, then import that log)",
            code="inspect_log_unfinished",
        )
    condition = _condition(log)
    eval_id, run_name, imported = _header(log, path, sha256, name, condition)
    logged_release = _logged_release(log)
    generate = _generate_config(log)
    started = _when(log.stats.started_at, "the log", "stats.started_at")
    finished = _when(log.stats.completed_at, "the log", "stats.completed_at")
    return CheckedLog(
        log=log,
        sha256=sha256,
        eval_id=eval_id,
        run_name=run_name,
        imported=imported,
        condition=condition,
        logged_release=logged_release,
        generate=generate,
        started=started,
        finished=finished,
        samples=samples,
        ids=_sample_ids(path, log, samples),
    )


def _sample_ids(path: Path, log: Any, samples: list[LoggedSample]) -> list[str]:
    """The samples' ids: the log holds at least one sample, every sample its header counts, one per probe."""
    if not samples:
        raise InspectLogError(f"{_file(path)} holds no samples (was it run with --no-log-samples?)")
    counted = getattr(log.results, "total_samples", None)
    if counted is not None and counted != len(samples):
        raise InspectLogError(
            f"{_file(path)}'s header counts {_number(counted)} samples but {len(samples):,} could be read "
            "(in an .eval log a sample whose id is not a valid file name is lost); nothing was imported",
            code="inspect_log_samples_missing",
        )
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise InspectLogError(
            "the log has several samples per probe (epochs > 1); a run holds one response per probe",
            code="inspect_log_epochs",
        )
    return ids


def _unstorable(path: Path, exc: Exception) -> InspectLogError:
    return InspectLogError(
        f"the database refused a value of {_file(path)} "
        f"({type(exc).__name__}: {jsonsafety.storable_text(str(exc).strip()[:300])}); nothing was imported",
        code="inspect_log_unstorable",
    )


__all__ = [
    "MAX_HEADER_STRING",
    "MAX_OUTPUT_CHARS",
    "MAX_TEXT_CHARS",
    "INT_MAX",
    "REQUEST_COST_LIMIT",
    "RUN_COST_LIMIT",
    "SCORER",
    "SHA256_INDEX",
    "SOURCE",
    "InspectImport",
    "InspectLogError",
    "LoggedSample",
    "inspect_log_import",
]
