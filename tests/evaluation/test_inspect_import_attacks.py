"""``import_inspect_log`` against hostile logs (issue 25, item 8): a log with a value the database cannot hold (a
NUL in an output, 10**15 tokens, a time that is not a number, …) is refused with the sample and the field named
and writes nothing, never a DataError traceback; a log is identified by the SHA-256 of its bytes, so a log that
claims another log's ``eval_id`` cannot block that log's import, and the same file twice is refused naming the run
that holds it. The logs are made the way ``test_inspect`` makes them: inspect's ``mockllm`` over the demo release,
then edited and written with inspect_ai's own ``read_eval_log``/``write_eval_log``."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from inspect_ai.log import read_eval_log, write_eval_log

from audit.models import Event
from evaluation.models import EvalRequest, EvalRun, ItemScore, MetricSnapshot
from evaluation.runs import inspect_log
from models_registry.models import ModelConfig
from tests.evaluation.test_inspect import _run_inspect, _variants, exports, offline  # noqa: F401  (fixtures)
from tests.probes.conftest import release  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count()
        for model in (EvalRun, EvalRequest, ItemScore, MetricSnapshot, ModelConfig, Event)
    )


def _import(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("import_inspect_log", str(path), *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def logged(release, exports, offline):  # noqa: F811
    """A finished raw log of the demo release: every probe answered correctly, the last one not served."""
    root = exports["kit"]
    variants = _variants(root, release, "raw")
    last = sorted(variants)[-1]
    log, *_ = _run_inspect(
        root,
        root,
        "raw",
        offline / "logs",
        root / "private" / "mappings.json",
        lambda pid, n: variants[pid][8 if pid == last else 0],
    )
    assert (
        log.status == "success" and len(log.samples) == len(variants) == 3
    )  # the demo release: three raw probes
    return Path(log.location)


def _served(log):
    return next(s for s in log.samples if not s.error)


def _errored(log):
    return next(s for s in log.samples if s.error)


def _set(obj, name, value):
    setattr(obj, name, value)


# (what the log says, the edit, the refusal[, the log's format]): each is refused before anything is written; before
# the checks, the NULs, the token counts and the max tokens were an uncaught DataError, a time that is not a number a
# ValueError, and a lost sample or a nonsense score went unnoticed
HOSTILE = [
    (
        "a NUL in an output",
        lambda log: _set(_served(log).output, "completion", '{"answer": "A\x00"}'),
        r'sample "PAQ-[0-9a-f]+": output\.completion contains the NUL character \\u0000 \(at character 13\)',
    ),
    (
        "a NUL in a sample's error",
        lambda log: _set(_errored(log).error, "message", "outage \x00"),
        r'sample "PAQ-[0-9a-f]+": error\.message contains the NUL character',
    ),
    (
        "a NUL in a sample id (a JSON log: the id is a file name in an .eval log)",
        lambda log: _set(_served(log), "id", "PAQ-\x00"),
        r'sample "PAQ-\\u0000": id contains the NUL character',
        "json",
    ),
    (
        "a NUL in a sample id (an .eval log: the zip cuts the sample's name at the NUL, inspect skips it)",
        lambda log: _set(_served(log), "id", "PAQ-\x00"),
        r"header counts 3 samples but 2 could be read",
    ),
    (
        "an output longer than a million characters",
        lambda log: _set(_served(log).output, "completion", "x" * (inspect_log.MAX_OUTPUT_CHARS + 1)),
        r"output\.completion is 1,000,001 characters long, more than the 1,000,000 allowed",
    ),
    (
        "10**15 input tokens",
        lambda log: _set(_served(log).output.usage, "input_tokens", 10**15),
        r'sample "PAQ-[0-9a-f]+": output\.usage\.input_tokens is 1,000,000,000,000,000, outside 0 to 2,147,483,647',
    ),
    (
        "10**15 output tokens",
        lambda log: _set(_served(log).output.usage, "output_tokens", 10**15),
        r"output\.usage\.output_tokens is 1,000,000,000,000,000, outside 0 to 2,147,483,647",
    ),
    (
        "negative tokens",
        lambda log: _set(_served(log).output.usage, "output_tokens", -5),
        r"output\.usage\.output_tokens is -5, outside 0 to 2,147,483,647",
    ),
    (
        "a time that is not a number",
        lambda log: _set(_served(log), "total_time", float("nan")),
        r'total_time is "nan", not a finite number of seconds',
    ),
    (
        "an infinite time",
        lambda log: _set(_served(log), "total_time", float("inf")),
        r'total_time is "inf", not a finite number of seconds',
    ),
    (
        "a time of 10**12 seconds",
        lambda log: _set(_served(log), "total_time", 1e12),
        r"total_time is 1,000,000,000,000.0 seconds, outside 0 to 2,147,483.647",
    ),
    (
        "a score that is not 0, 1 or NaN",
        lambda log: _served(log).scores["physalign_scorer"].value.update(G=7),
        r"scores\.physalign_scorer\.value\.G is \"7\", not 0, 1 or NaN",
    ),
    (
        "a NUL in the eval id",
        lambda log: _set(log.eval, "eval_id", "eval\x00"),
        r"the log: eval\.eval_id contains the NUL character",
    ),
    (
        "a NUL in the model's name",
        lambda log: _set(log.eval, "model", "mockllm/\x00"),
        r"the log: eval\.model contains the NUL character",
    ),
    (
        "a NUL in a task argument",
        lambda log: log.eval.task_args.update(interface="T\x00"),
        r"cannot be kept in the run's manifest: JSON strings may not contain the NUL character "
        r"\\u0000 \(at \$\.task_args\.interface\)",
    ),
    (
        "a task argument that is not a number",
        lambda log: log.eval.task_args.update(limit=float("nan")),
        r"JSON numbers must be finite \(at \$\.task_args\.limit\)",
    ),
    (
        "a NUL in the release id",
        lambda log: log.eval.metadata.update(physalign_release_id="NREL-\x00"),
        r"eval\.metadata\.physalign_release_id contains the NUL character",
    ),
    (
        "max tokens of 10**15",
        lambda log: _set(log.eval.model_generate_config, "max_tokens", 10**15),
        r"eval\.model_generate_config\.max_tokens is 1,000,000,000,000,000, outside 0 to 2,147,483,647",
    ),
]


def test_a_log_with_a_value_the_database_cannot_hold_is_refused_naming_it_and_writes_nothing(
    logged,
    offline,  # noqa: F811
    eager,
):
    counts = _counts()
    for index, (what, edit, message, *fmt) in enumerate(HOSTILE):
        log = read_eval_log(str(logged))
        edit(log)
        path = offline / f"hostile-{index}.{fmt[0] if fmt else 'eval'}"
        write_eval_log(log, str(path))
        with pytest.raises(CommandError, match=message) as refused:
            _import(path)
        assert "nothing was imported" in str(refused.value), what
        assert _counts() == counts, what
    # the untouched log imports, so each refusal was the edited value's
    assert "requests imported" in _import(logged)


def test_options_the_database_cannot_hold_are_refused(logged):
    counts = _counts()
    for args, message in (
        (("--name", "run \x00"), r"--name contains the NUL character"),
        (("--name", "n" * 201), r"--name is 201 characters long, more than the 200 allowed"),
        (("--release", "NREL-\x00"), r"--release contains the NUL character"),
        (("--model", "m\x00"), r"--model contains the NUL character"),
    ):
        with pytest.raises(CommandError, match=message):
            _import(logged, *args)
    assert _counts() == counts


def test_a_log_claiming_another_logs_eval_id_does_not_block_it(logged, offline, eager):  # noqa: F811
    """The attacker's log (another output, the victim's eval id) is imported first; the victim's log still
    imports, as its own run, with its own outputs."""
    victim = read_eval_log(str(logged))
    forged = read_eval_log(str(logged))
    target = _served(forged)
    target.output.completion = "no JSON at all"
    assert forged.eval.eval_id == victim.eval.eval_id
    claiming = offline / "claiming.eval"
    write_eval_log(forged, str(claiming))
    assert _sha256(claiming) != _sha256(logged)

    assert "requests imported" in _import(claiming, "--name", "forged")
    assert "requests imported" in _import(logged, "--name", "victim")
    runs = {run.name: run for run in EvalRun.objects.filter(name__in=["forged", "victim"])}
    assert set(runs) == {"forged", "victim"}
    for name, path in (("forged", claiming), ("victim", logged)):
        run = runs[name]
        assert run.status == "completed" and run.options["inspect_eval_id"] == victim.eval.eval_id
        assert run.options["inspect_log_sha256"] == run.manifest["imported"]["sha256"] == _sha256(path)
    outputs = {
        name: {r.probe.logical_probe_id: r.raw_output for r in run.requests.select_related("probe")}
        for name, run in runs.items()
    }
    assert outputs["forged"][str(target.id)] == "no JSON at all"
    assert outputs["victim"] == {
        str(s.id): (None if s.error else s.output.completion) for s in victim.samples
    }


def test_the_same_file_twice_is_refused_naming_the_run_that_holds_it(logged, offline, eager):  # noqa: F811
    _import(logged, "--name", "first")
    first = EvalRun.objects.get(name="first")
    counts = _counts()
    copy = offline / "renamed-copy.eval"
    shutil.copyfile(logged, copy)  # the same bytes under another name: the same log
    for path in (logged, copy):
        with pytest.raises(CommandError, match=rf"is already run {first.pk} \(first\)"):
            _import(path, "--name", "second")
    assert _counts() == counts and not EvalRun.objects.filter(name="second").exists()


def test_the_database_holds_one_run_per_log_file(logged, eager, monkeypatch):
    """Two imports of one file at once: the unique index refuses the second run even if both passed the check
    (simulated by skipping it), and the import still says which run holds the log."""
    sha256 = "ab" * 32
    EvalRun.objects.create(name="a", options={"inspect_log_sha256": sha256})
    EvalRun.objects.create(name="b", options={})  # runs the app executes have no hash: never a collision
    EvalRun.objects.create(name="c", options={})
    with pytest.raises(IntegrityError, match=inspect_log.SHA256_INDEX), transaction.atomic():
        EvalRun.objects.create(name="d", options={"inspect_log_sha256": sha256})

    _import(logged, "--name", "first")
    first = EvalRun.objects.get(name="first")
    real, calls = inspect_log._imported_already, []

    def raced(path, digest):  # the other import commits between this one's checks and its insert
        calls.append(digest)
        if len(calls) > 2:
            real(path, digest)

    monkeypatch.setattr(inspect_log, "_imported_already", raced)
    counts = _counts()
    with pytest.raises(CommandError, match=rf"is already run {first.pk}"):
        _import(logged, "--name", "second")
    assert len(calls) == 3 and _counts() == counts


def test_a_value_no_check_caught_is_still_a_refusal_not_a_traceback(logged, offline, monkeypatch):  # noqa: F811
    """Were a check missing, the database's own refusal is reported as one, and nothing is written."""
    log = read_eval_log(str(logged))
    _served(log).output.completion = "A\x00"
    path = offline / "nul.eval"
    write_eval_log(log, str(path))
    monkeypatch.setattr(inspect_log, "_UNSTORABLE", re.compile("(?!)"))  # the text check finds nothing
    counts = _counts()
    with pytest.raises(CommandError, match=r"the database refused a value of nul\.eval \(DataError: .*NUL"):
        _import(path)
    assert _counts() == counts
