"""The inspect_ai task over a release (issue 17, item 2): run offline with inspect's ``mockllm`` model over the demo
release (the Kit layout and the HF export), the model gets the released messages and view bytes in order, the
inspect scorer's C/G/J equal the app's scorer on every item, ``import_inspect_log`` stores the log as a run whose
item scores and metrics are the app's for the same outputs, nothing private is in the samples, and a second
import or a garbage file is refused with nothing written."""

from __future__ import annotations

import base64
import io
import json
import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import inspect_ai
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from evaluation.models import EvalRequest, EvalRun, ItemScore
from evaluation.runs import eval_run_create, eval_run_dispatch
from evaluation.scoring import ModelResponse, score
from llm.providers.simulated import SimulatedProvider
from llm.types import ImageInput, LLMRequest, ProviderConfig
from models_registry.models import ModelConfig
from physalign_studio.inspect_task import (
    ReleaseSourceError,
    load_release,
    physalign,
    physalign_scorer,
)
from probes.exports.hf import record_of_row, release_sources, write_hf
from probes.exports.leakage import export_leaks
from probes.exports.public import read_public
from tests.factories import scripted
from tests.probes.conftest import release  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

SCORER = "physalign_scorer"
TASK_FILE = Path(__file__).parents[2] / "physalign_studio" / "inspect_task.py"


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """inspect's directories under tmp_path, no display, and no connection leaves the machine."""
    for name, sub in (
        ("INSPECT_LOG_DIR", "logs"),
        ("INSPECT_CACHE_DIR", "inspect-cache"),
        ("XDG_DATA_HOME", "xdg-data"),
        ("XDG_CACHE_HOME", "xdg-cache"),
        ("XDG_CONFIG_HOME", "xdg-config"),
    ):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    for name in (
        "INSPECT_TELEMETRY",
        "INSPECT_API_KEY_OVERRIDE",
        "INSPECT_EVAL_MODEL",
        "PHYSALIGN_PRIVATE_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    connect, blocked = socket.socket.connect, []

    def local_only(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            blocked.append(address)
            raise OSError(f"network access in a test: {address}")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", local_only)
    yield tmp_path
    assert blocked == []  # nothing tried to leave the machine


@pytest.fixture
def exports(release, tmp_path):  # noqa: F811
    root = Path(release.path)
    write_hf(read_public(root), tmp_path / "hf", release_sources(release))
    return {"kit": root, "hf": tmp_path / "hf"}


def _records(root: Path, condition: str) -> dict[str, dict]:
    return {
        r["logical_probe_id"]: r for r in json.loads((root / "public" / f"qa_{condition}.json").read_text())
    }


def _keys(release) -> dict[str, dict]:  # noqa: F811
    return {item.logical_probe_id: item.private_mapping for item in release.items.all()}


def _gold_answer(key: dict) -> str:
    gold = {t["id"] for t in key["gold_targets"]}
    answer = {
        key["response_contract"]["binding_key"]: next(
            a for a, t in key["candidate_map"].items() if t["id"] in gold
        )
    }
    if key["read_targets"]:
        answer["read"] = key["read_targets"][0]["expected"]
    return json.dumps(answer)


def _variants(root: Path, release, condition: str) -> dict[str, list[dict]]:  # noqa: F811
    """Per probe every kind of output the scorer tells apart: correct (bare and fenced), the offline simulated
    model's reply, unparseable, empty, a non-candidate, refused, truncated, and not served at all."""
    keys = _keys(release)
    sim = ProviderConfig(name="sim", provider="simulated", model="sim", extra={"seed": 11})
    variants = {}
    for probe_id, record in sorted(_records(root, condition).items()):
        key = keys[probe_id]
        images = tuple(
            ImageInput((root / "public" / a["path"]).read_bytes()) for a in record["input"]["attachments"]
        )
        request = LLMRequest(
            record["input"]["messages"]["system"], record["input"]["messages"]["user"], images
        )
        variants[probe_id] = [
            {"text": _gold_answer(key)},
            {"text": SimulatedProvider().call(request, sim).text},
            {"text": "no JSON at all"},
            {"text": ""},
            {"text": "```json\n" + _gold_answer(key) + "\n```"},
            {"text": json.dumps({key["response_contract"]["binding_key"]: "E99", "read": 3})},
            {"text": _gold_answer(key), "stop_reason": "content_filter"},
            {"text": _gold_answer(key)[:-1], "stop_reason": "max_tokens"},
            {"error": "simulated outage"},
        ]
    return variants


def _mock_model(root: Path, condition: str, plan, seen: dict):
    """mockllm/model answering each probe (found by its user text): its n-th call gets ``plan(probe_id, n)``;
    ``seen`` gets what the model was sent."""
    by_user = {r["input"]["messages"]["user"]: pid for pid, r in _records(root, condition).items()}
    assert len(by_user) == len(_records(root, condition))  # the user texts tell the probes apart
    calls: dict[str, int] = {}

    def answer(messages, tools, tool_choice, config):
        user = messages[-1]
        probe_id = by_user[user.content[0].text]
        seen[probe_id] = {
            "roles": [m.role for m in messages],
            "system": messages[0].text if messages[0].role == "system" else "",
            "parts": [(c.type, c.text if c.type == "text" else c.image) for c in user.content],
        }
        planned = plan(probe_id, calls.setdefault(probe_id, 0))
        calls[probe_id] += 1
        if "error" in planned:
            raise RuntimeError(planned["error"])
        output = ModelOutput.from_content(
            model="mockllm/model", content=planned["text"], stop_reason=planned.get("stop_reason", "stop")
        )
        output.usage = ModelUsage(
            input_tokens=100 + len(probe_id), output_tokens=len(planned["text"]) // 4 + 1
        )
        return output

    return get_model("mockllm/model", custom_outputs=answer)


STATUS_OF_STOP = {"stop": "completed", "content_filter": "refusal", "max_tokens": "truncated"}


def _app_score(sample, key: dict, condition: str) -> tuple:
    """The app's scorer on what the log says the model answered, with the status the provider layer gives it."""
    response = (
        None
        if sample.error
        else ModelResponse(sample.output.completion, STATUS_OF_STOP[sample.output.stop_reason])
    )
    item = score(response, key, condition)
    return (item.status, item.C, item.G, item.J)


def _run_inspect(
    source: Path, root: Path, condition: str, log_dir: Path, private: Path | None, plan, epochs=1
):
    seen: dict = {}
    started = time.perf_counter()
    task = physalign(source=str(source), condition=condition, private=str(private) if private else None)
    [log] = inspect_ai.eval(
        task,
        model=_mock_model(root, condition, plan, seen),
        log_dir=str(log_dir),
        display="none",
        fail_on_error=False,
        retry_on_error=0,
        epochs=epochs,
    )
    return log, seen, task, time.perf_counter() - started


def _nan_none(value):
    return None if isinstance(value, float) and math.isnan(value) else value


def _inspect_scores(log) -> dict[tuple[str, int], tuple]:
    return {
        (str(s.id), s.epoch): (
            s.scores[SCORER].answer,
            *(_nan_none(s.scores[SCORER].value[k]) for k in ("C", "G", "J")),
        )
        for s in log.samples
        if s.scores
    }


@pytest.mark.parametrize("condition", ["raw", "gold"])
def test_the_model_gets_the_released_messages_and_the_scores_are_the_apps_on_every_item(
    release,  # noqa: F811
    exports,
    offline,
    condition,
):
    root = exports["kit"]
    records = _records(root, condition)
    keys = _keys(release)
    variants = _variants(root, release, condition)
    kinds = len(next(iter(variants.values())))
    for fmt in ("kit", "hf"):
        # every probe gets every kind of output once, one per epoch
        log, seen, task, _ = _run_inspect(
            exports[fmt],
            root,
            condition,
            offline / f"logs-{fmt}",
            root / "private" / "mappings.json",
            lambda probe_id, n: variants[probe_id][n % kinds],
            epochs=kinds,
        )
        assert log.status == "success" and len(log.samples) == len(records) * kinds
        # (a) what the model received: the system and user messages as released, then the views' bytes in order
        assert set(seen) == set(records)
        for probe_id, record in records.items():
            got = seen[probe_id]
            assert got["roles"] == ["system", "user"]
            assert got["system"] == record["input"]["messages"]["system"]
            assert got["parts"][0] == ("text", record["input"]["messages"]["user"])
            views = [(root / "public" / a["path"]).read_bytes() for a in record["input"]["attachments"]]
            assert views and [t for t, _ in got["parts"][1:]] == ["image"] * len(views)
            assert [base64.b64decode(url.split(",", 1)[1]) for _, url in got["parts"][1:]] == views
            assert all(url.startswith("data:image/png;base64,") for _, url in got["parts"][1:])
        assert [s.id for s in task.dataset] == [
            r["logical_probe_id"] for r in json.loads((root / "public" / f"qa_{condition}.json").read_text())
        ] or fmt == "hf"
        assert {s.id: s.metadata["condition"] for s in task.dataset} == dict.fromkeys(records, condition)
        # (b) the inspect scorer is the app's scorer on every item; a sample that was never served has no score
        scored = _inspect_scores(log)
        assert set(scored) == {(str(s.id), s.epoch) for s in log.samples if not s.error}
        assert len(scored) == len(records) * (kinds - 1)
        for sample in log.samples:
            if not sample.error:
                assert scored[(str(sample.id), sample.epoch)] == _app_score(
                    sample, keys[str(sample.id)], condition
                )
        answered = {(str(s.id), s.output.completion) for s in log.samples if not s.error}
        assert answered == {(p, v["text"]) for p, vs in variants.items() for v in vs if "text" in v}
        statuses = {e[0] for e in scored.values()}
        assert statuses == {"completed", "unparseable", "refusal", "truncated"}
        assert {e[2] for e in scored.values()} == {0, 1}
        if condition == "raw":
            assert {e[1] for e in scored.values()} == {None, 0, 1}  # C only on the probe with a reading
        assert log.eval.task_args["condition"] == condition
        assert log.eval.metadata["physalign_release_id"] == release.release_id
        # (d) the whole scored log (samples, messages, scores, task and scorer arguments) holds nothing private
        as_json = offline / f"log-json-{fmt}-{condition}"
        as_json.mkdir()
        write_eval_log(log, str(as_json / "log.json"), format="json")
        assert export_leaks(root, as_json, [], lambda p: p.read_text()) == []


def test_nothing_private_is_in_the_samples(release, exports, offline):  # noqa: F811
    root = exports["kit"]
    for fmt in ("kit", "hf"):
        rows = []
        for condition in ("raw", "gold"):
            for sample in physalign(source=str(exports[fmt]), condition=condition).dataset:
                system, user = sample.input
                images = [c for c in user.content if c.type == "image"]
                rows.append(
                    {
                        **{k: sample.metadata[k] for k in ("instance_id", "logical_probe_id", "task_id")},
                        **{k: sample.metadata[k] for k in ("interface", "language", "split", "condition")},
                        "system": system.text,
                        "user": user.content[0].text,
                        "images": [{"path": ""} for _ in images],
                        "image_asset_ids": ["" for _ in images],
                        "image_sha256": sample.metadata["image_sha256"],
                        "image_widths": [0 for _ in images],
                        "image_heights": [0 for _ in images],
                    }
                )
                serialized = offline / "serialized" / fmt / f"{condition}_{sample.id}.json"
                serialized.parent.mkdir(parents=True, exist_ok=True)
                serialized.write_text(sample.model_dump_json(), encoding="utf-8")
        records = [record_of_row(row) for row in rows]
        assert export_leaks(root, offline / "serialized" / fmt, records, lambda p: p.read_text()) == []
    # the scan sees a private string when one is there
    frozen_entity = next(iter(_keys(release).values()))["candidate_map"]
    entity = next(iter(frozen_entity.values()))["id"]
    (offline / "serialized" / "kit" / "leak.json").write_text(json.dumps({"metadata": {"x": entity}}))
    assert export_leaks(root, offline / "serialized" / "kit", records, lambda p: p.read_text())


def test_without_the_private_key_nothing_is_scored_and_a_wrong_key_is_refused(release, exports, offline):  # noqa: F811
    root = exports["kit"]
    task = physalign(source=str(root), condition="raw")
    assert task.scorer is None or task.scorer == []
    variants = _variants(root, release, "raw")
    # the task as ``inspect eval physalign_studio/inspect_task.py@physalign -T source=…`` loads it (by file)
    [log] = inspect_ai.eval(
        f"{TASK_FILE}@physalign",
        task_args={"source": str(root), "condition": "raw"},
        model=_mock_model(root, "raw", lambda pid, n: variants[pid][0], {}),
        log_dir=str(offline / "logs-nokey"),
        display="none",
    )
    assert log.eval.task_args == {"source": str(root), "condition": "raw", "interface": None, "private": None}
    assert log.status == "success" and log.samples and all(not s.scores for s in log.samples)
    assert not log.results or not log.results.scores
    # scored afterwards with the key (``inspect score``): the app's scores
    scored = inspect_ai.score(
        log, physalign_scorer(private=str(root / "private" / "mappings.json")), display="none"
    )
    keys = _keys(release)
    assert _inspect_scores(scored) == {
        (str(s.id), s.epoch): _app_score(s, keys[str(s.id)], "raw") for s in scored.samples
    }
    wrong = offline / "wrong.json"
    wrong.write_text(json.dumps([{"logical_probe_id": "PB-not-this-release"}]))
    with pytest.raises(ReleaseSourceError, match="no mapping for"):
        physalign(source=str(root), condition="raw", private=str(wrong))
    with pytest.raises(ReleaseSourceError, match="not a release's private key"):
        physalign_scorer(private=str(root / "release.json"))
    with pytest.raises(ReleaseSourceError, match="neither a release folder"):
        load_release(offline, "raw")
    with pytest.raises(ReleaseSourceError, match="condition must be"):
        load_release(root, "no_image")


def _item_scores(run) -> dict[str, tuple]:
    return {
        s.request.probe.logical_probe_id: (s.status, s.C, s.G, s.J)
        for s in ItemScore.objects.filter(request__run=run).select_related("request__probe")
    }


# the kinds of output (indexes into ``_variants``) the probes answer in an imported run, in probe id order:
# correct, truncated, never served (raw); refused, unparseable (gold)
IMPORTED = {"raw": [0, 7, 8], "gold": [6, 2]}


@pytest.mark.parametrize("condition", ["raw", "gold"])
def test_an_imported_log_is_a_run_with_the_apps_scores_and_metrics(
    release,  # noqa: F811
    exports,
    offline,
    eager,
    client,
    admin_user_role,
    condition,
):
    root = exports["kit"]
    variants = _variants(root, release, condition)
    outputs = {pid: variants[pid][i] for pid, i in zip(sorted(variants), IMPORTED[condition], strict=True)}
    log, *_ = _run_inspect(
        exports["hf"],
        root,
        condition,
        offline / "logs",
        root / "private" / "mappings.json",
        lambda pid, n: outputs[pid],
    )
    path = Path(log.location)
    out = io.StringIO()
    call_command("import_inspect_log", str(path), "--name", "inspect demo", stdout=out)
    run = EvalRun.objects.get(name="inspect demo")
    assert f"{len(log.samples)} requests imported" in out.getvalue()
    scored = {pid: e for (pid, _), e in _inspect_scores(read_eval_log(str(path))).items()}
    assert f"agree with the app's on {len(scored)}/{len(scored)} items" in out.getvalue()
    # inspect's metrics: the means of C, G and J over the items where each applies
    metrics = {s.name: s.metrics["mean"].value for s in log.results.scores}
    for index, name in enumerate(("C", "G", "J"), start=1):
        values = [e[index] for e in scored.values() if e[index] is not None]
        assert (math.isnan(metrics[name]) and not values) or metrics[name] == pytest.approx(
            sum(values) / len(values)
        )
    # (c) one request per sample, the raw output and tokens as logged, the item scores the inspect scores
    assert run.status == "completed" and run.total == len(log.samples) == run.requests.count()
    assert run.release == release and run.conditions == [condition] and run.metrics
    assert run.options["inspect_eval_id"] == log.eval.eval_id
    config = run.model_configs.get()
    assert (config.name, config.provider, config.is_active) == ("inspect-mockllm-model", "scripted", False)
    items = _item_scores(run)
    assert {p: items[p] for p in scored} == scored
    assert set(items) == set(outputs)
    errored = [p for p, o in outputs.items() if "error" in o]
    assert [items[p] for p in errored] == [("infra_missing", None, None, None)] * len(errored)
    rows = {r.probe.logical_probe_id: r for r in run.requests.select_related("probe")}
    for sample in log.samples:
        row = rows[str(sample.id)]
        if sample.error:
            assert row.raw_output is None and row.status == "infra_missing" and "outage" in row.error
            continue
        assert row.raw_output == sample.output.completion == outputs[str(sample.id)]["text"]
        assert (row.input_tokens, row.output_tokens) == (
            sample.output.usage.input_tokens,
            sample.output.usage.output_tokens,
        )
    assert run.input_tokens == sum(r.input_tokens for r in rows.values()) > 0
    assert {s for s, *_ in items.values()} == (
        {"completed", "truncated", "infra_missing"} if condition == "raw" else {"refusal", "unparseable"}
    )

    # the run's pages read it like any other run
    client.force_login(admin_user_role)
    for page in ("run_detail", "run_items"):
        response = client.get(reverse(f"evaluation:{page}", args=[run.pk]))
        assert response.status_code == 200 and "inspect-mockllm-model" in response.content.decode()
    assert client.get(reverse("home:home")).status_code == 200

    # the same outputs through the app's own run (the scripted provider) give the same scores and metrics
    script = []
    for probe_id, planned in outputs.items():
        text = _records(root, condition)[probe_id]["input"]["messages"]["user"]
        finish = {"stop": "stop", "content_filter": "content_filter", "max_tokens": "length"}
        reply = (
            {"error": 400}
            if "error" in planned
            else {"text": planned["text"], "finish_reason": finish[planned.get("stop_reason", "stop")]}
        )
        script.append({"match": text, "outputs": [reply]})
    scripted("app-same-outputs", script, default="unmatched")
    app = eval_run_create(
        model_names=["app-same-outputs"], conditions=[condition], release=release, start=False
    )
    eval_run_dispatch(run_id=app.pk)
    app.refresh_from_db()
    assert app.status == "completed"
    assert _item_scores(app) == items
    assert app.metrics["models"]["app-same-outputs"] == run.metrics["models"]["inspect-mockllm-model"]
    assert app.snapshots.count() == run.snapshots.count() > 0

    # (e) a second import is refused, naming the run; nothing more is written
    counts = (EvalRun.objects.count(), EvalRequest.objects.count(), ModelConfig.objects.count())
    with pytest.raises(CommandError, match=f"already run {run.pk}"):
        call_command("import_inspect_log", str(path), stdout=io.StringIO())
    assert (EvalRun.objects.count(), EvalRequest.objects.count(), ModelConfig.objects.count()) == counts


def test_bad_input_is_refused_and_writes_nothing(release, exports, offline):  # noqa: F811
    root = exports["kit"]
    garbage = offline / "garbage.eval"
    garbage.write_bytes(b"PK\x03\x04 not really a zip")
    text = offline / "notes.json"
    text.write_text('{"hello": "world"}')
    variants = _variants(root, release, "raw")
    log, *_ = _run_inspect(
        root,
        root,
        "raw",
        offline / "logs",
        root / "private" / "mappings.json",
        lambda pid, n: variants[pid][1],
    )
    # a log whose samples name probes this database does not have
    edited = read_eval_log(log.location)
    edited.samples[0].id = "PB-unknown-probe"
    edited.eval.eval_id = "another-eval"
    unknown = offline / "unknown.eval"
    write_eval_log(edited, str(unknown))
    # a log whose model was asked something else than the released probe
    changed = read_eval_log(log.location)
    changed.samples[1].input[-1].content[0].text += " (edited)"
    changed.eval.eval_id = "a-third-eval"
    write_eval_log(changed, str(offline / "changed.eval"))
    cancelled = read_eval_log(log.location)
    cancelled.status = "cancelled"
    write_eval_log(cancelled, str(offline / "cancelled.eval"))
    counts = (EvalRun.objects.count(), EvalRequest.objects.count(), ModelConfig.objects.count())
    for path, message in (
        (offline / "cancelled.eval", "ended cancelled, not success"),
        (offline / "changed.eval", "was not asked the probe's raw messages as released"),
        (garbage, "is not an inspect_ai log"),
        (text, "is not an inspect_ai log"),
        (offline / "missing.eval", "no such file"),
        (unknown, "not probes of release .*PB-unknown-probe"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("import_inspect_log", str(path), stdout=io.StringIO())
    with pytest.raises(CommandError, match="no release NOPE"):
        call_command("import_inspect_log", str(log.location), "--release", "NOPE", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no model config named 'nope'"):
        call_command("import_inspect_log", str(log.location), "--model", "nope", stdout=io.StringIO())
    assert (EvalRun.objects.count(), EvalRequest.objects.count(), ModelConfig.objects.count()) == counts


def test_the_task_module_is_django_free():
    code = (
        "import sys, physalign_studio.inspect_task; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework', 'celery'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    assert done.stdout.strip() == "[]"
