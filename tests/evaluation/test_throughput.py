"""What keeps an evaluation run's call threads busy (bench/eval_throughput.py measures the rate itself): large
chunks that taper to small last ones, and a chunk executor that claims a bounded round of rows ahead."""

from __future__ import annotations

import threading

import pytest

from evaluation.models import EvalRequest
from evaluation.runs import eval_chunk_process, eval_run_create, execution
from evaluation.runs.tables import DEFAULT_OPTIONS
from run_engine.engine import TAPER_FLOOR, chunk_ids

pytestmark = pytest.mark.django_db


def test_large_chunks_taper_to_small_last_ones():
    size = int(DEFAULT_OPTIONS["chunk_size"])
    assert size >= 500  # each chunk hand-over idles a worker's threads for about one call
    chunks = chunk_ids(list(range(5000)), size)
    sizes = [len(c) for c in chunks]
    assert [i for c in chunks for i in c] == list(range(5000))  # every id once, in order
    assert sizes[:7] == [size] * 7 and sizes == sorted(sizes, reverse=True)
    assert max(sizes[-4:]) <= TAPER_FLOOR  # the last chunks are short, whatever the chunk size
    assert [len(c) for c in chunk_ids(list(range(10)), 4)] == [3, 2, 2, 1, 1, 1]  # small sizes unchanged


def test_the_executor_claims_one_round_first_and_at_most_one_round_ahead(
    approved_probes, settings, monkeypatch
):
    from models_registry.models import ModelConfig

    threads = 2
    settings.EVAL_CHUNK_THREADS = threads
    ModelConfig.objects.create(
        name="sim", provider="simulated", model="s", max_retries=0, extra={"seed": 3, "latency_ms": 15}
    )
    run = eval_run_create(
        model_names=["sim"],
        conditions=["raw", "no_image", "reordered"],
        start=False,
        options={"resamples": 20},
    )
    ids = list(run.requests.order_by("pk").values_list("pk", flat=True))
    assert len(ids) > 2 * threads
    lock, finished, claims = threading.Lock(), [0], []
    real_claim, real_call = execution._claim, execution._call

    def claim(request_ids, lease, token, rows):
        with lock:
            outstanding = sum(len(c) for _, c in claims) - finished[0]  # claimed, not yet answered
        claimed, busy = real_claim(request_ids, lease, token, rows)
        claims.append((outstanding, claimed))
        return claimed, busy

    def call(row, request, config):
        result = real_call(row, request, config)
        with lock:
            finished[0] += 1
        return result

    monkeypatch.setattr(execution, "_claim", claim)
    monkeypatch.setattr(execution, "_call", call)
    assert eval_chunk_process(run_id=run.pk, request_ids=ids) == []
    assert sorted(pk for _, c in claims for pk in c) == ids  # every row claimed once
    assert len(claims[0][1]) == threads  # the first claim is one round: the calls start soonest
    # never more than the calls in flight plus one round queued behind them
    assert all(outstanding + len(c) <= 2 * threads for outstanding, c in claims)
    assert any(outstanding + len(c) > threads for outstanding, c in claims)  # it does queue ahead
    assert set(run.requests.values_list("status", flat=True)) <= set(EvalRequest.TERMINAL)
