"""The demo's simulated models on demo probes (generated like ``load_demo``, compiled and approved): their
profiles show up in CAcc, GAcc and parse failures, and nothing private reaches them."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from django.db import connection

from annotation.demo.generator import generate_workspace
from annotation.importers import import_kit_workspace
from evaluation.models import EvalRequest, ItemScore
from evaluation.runs import eval_run_create, eval_run_dispatch
from llm.providers.simulated import SimulatedProvider, _packet_reads
from models_registry.demo import demo_models_ensure
from models_registry.models import ModelConfig
from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute, probe_record_review

pytestmark = pytest.mark.django_db

PROFILED = ["sim-careful", "sim-packet-reliant", "sim-first-option", "sim-sloppy"]


def _demo_probes(tmp_path, count: int = 8) -> list[Probe]:
    generate_workspace(tmp_path / "ws", count=count, seed=2027)
    assert import_kit_workspace(workspace=tmp_path / "ws").succeeded
    run = compile_run_create(actor=None, seed=2027, enqueue=False)
    compile_run_execute(run_id=run.pk)
    probes = list(Probe.objects.exclude(state=Probe.State.SUPERSEDED).select_related("key", "parent"))
    for probe in probes:
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )
    demo_models_ensure()
    for config in ModelConfig.objects.filter(name__in=PROFILED):
        config.extra = {**config.extra, "latency_ms": 0}
        config.save()
    return probes


def _rates(run) -> dict[tuple[str, str], dict[str, float]]:
    sums: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for score in ItemScore.objects.filter(request__run=run).select_related("request__model"):
        bucket = sums[(score.request.model.name, score.request.condition)]
        for field in ("C", "G"):
            if getattr(score, field) is not None:
                bucket[field].append(getattr(score, field))
        bucket["unparseable"].append(int(score.status == "unparseable"))
    return {key: {f: sum(v) / len(v) for f, v in fields.items() if v} for key, fields in sums.items()}


def test_profiles_differ_on_the_demo(tmp_path, eager):
    _demo_probes(tmp_path)
    run = eval_run_create(model_names=PROFILED, conditions=["raw", "gold", "no_image"], start=False)
    eval_run_dispatch(run_id=run.pk)
    rates = _rates(run)
    careful, sloppy = rates[("sim-careful", "raw")], rates[("sim-sloppy", "raw")]
    assert careful["C"] > sloppy["C"] + 0.2  # reading skill shows in CAcc
    assert careful["G"] > sloppy["G"] + 0.15
    # image reliance: the packet-reliant model gains from +GT far more than the careful one
    reliant_gain = rates[("sim-packet-reliant", "gold")]["G"] - rates[("sim-packet-reliant", "raw")]["G"]
    careful_gain = rates[("sim-careful", "gold")]["G"] - rates[("sim-careful", "raw")]["G"]
    assert reliant_gain > careful_gain + 0.1
    # format failures at about the profile's rate (0.24), and rare for the careful model (0.01)
    sloppy_fail = sum(rates[("sim-sloppy", c)]["unparseable"] for c in ("raw", "gold", "no_image")) / 3
    assert 0.12 <= sloppy_fail <= 0.36
    assert rates[("sim-careful", "raw")]["unparseable"] <= 0.05


def test_no_private_string_reaches_the_simulated_models(tmp_path, eager, monkeypatch):
    probes = _demo_probes(tmp_path, count=4)
    calls: list[tuple[dict, str, dict]] = []
    original = SimulatedProvider.call

    def forbid_database(execute, sql, params, many, context):
        raise AssertionError(f"the simulated provider queried the database: {sql}")

    def recording_call(self, request, config, **kwargs):
        with connection.execute_wrapper(forbid_database):
            reply = original(self, request, config, **kwargs)
        calls.append((request.record(), reply.text, reply.raw))
        return reply

    monkeypatch.setattr(SimulatedProvider, "call", recording_call)
    run = eval_run_create(
        model_names=PROFILED, conditions=["raw", "gold", "no_image", "reordered"], start=False
    )
    eval_run_dispatch(run_id=run.pk)
    assert len(calls) == run.total == EvalRequest.objects.filter(run=run).count()
    assert not EvalRequest.objects.filter(run=run, status="infra_missing").exists()

    private: set[str] = set()
    for probe in probes:
        key = probe.key.key
        private.update(entry["id"] for entry in key["candidate_map"].values())
        private.update(target["id"] for target in key["gold_targets"])
        private.update(key["source_hashes"].values())
        private.update(r["source_file_sha256"] for r in key["source_records"])
        private.update(s for s in (probe.parent.answer, probe.parent.solution) if s and len(s) > 3)
    assert len(private) > 10
    for record, text, raw in calls:
        seen = json.dumps(record, ensure_ascii=False) + text + json.dumps(raw, ensure_ascii=False)
        leaked = [s for s in private if s in seen]
        assert not leaked, (record["request_id"], leaked)
        if record["request_id"].endswith(":raw"):
            assert _packet_reads(record["user"]) == {}  # Base requests carry no reading packet
