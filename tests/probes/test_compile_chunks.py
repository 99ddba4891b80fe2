"""Compile runs in chunks: the same result, byte for byte, however the parents are chunked and in whatever order
the chunks run; a chunk whose worker died is taken over and written once."""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from annotation.demo import generate_workspace
from annotation.importers import import_kit_workspace
from probes.compiler.chunks import plan_chunks
from probes.models import CompileChunk, CompileIssue, CompileRun, Membership, Probe, ProbeKey, RenderedView
from probes.run_labels import run_state
from probes.services import (
    CHUNK_LEASE_SECONDS,
    CHUNK_ROWS,
    compile_chunk_execute,
    compile_chunks,
    compile_run_create,
    compile_run_execute,
    compile_run_plan,
)
from run_engine.engine import rows_claim

from .conftest import make_demo_parent

PROBE_SKIP = {"id", "created_at", "updated_at", "compile_run"}


def make_parents(django_user_model, tmp_path) -> None:
    """Generated parents, two parents sharing one source identity (DUPLICATE_LOGICAL_ID) and one whose Pass 4
    went stale (a parent-level issue)."""
    generate_workspace(tmp_path / "ws", count=8, seed=11)
    import_kit_workspace(workspace=tmp_path / "ws", dataset_root=None)
    make_demo_parent(django_user_model)
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_SAME_IDENTITY", sample="SYNTHETIC_TEST_ONLY")
    stale = make_demo_parent(django_user_model, problem_id="SYNTHETIC_STALE", sample="SYNTHETIC_STALE")
    stale.passes.filter(pass_no=4).update(document_sha256="0" * 64)


@pytest.fixture
def parents(db, django_user_model, tmp_path):
    make_parents(django_user_model, tmp_path)


def dump() -> dict:
    """Every row a compile writes, without ids and clocks, plus the stored bytes of every view."""
    fields = [f.name for f in Probe._meta.concrete_fields if f.name not in PROBE_SKIP]
    probes = {}
    for probe in Probe.objects.select_related("parent").order_by("logical_probe_id"):
        row = {name: getattr(probe, name) for name in fields}
        row["parent"] = probe.parent.problem_id
        probes[probe.logical_probe_id] = row
    keys = {
        k.probe.logical_probe_id: [k.key, k.native_query, k.displays, k.assets]
        for k in ProbeKey.objects.select_related("probe")
    }
    views = {}
    for view in RenderedView.objects.select_related("probe"):
        with default_storage.open(view.file.name, "rb") as handle:
            stored = hashlib.sha256(handle.read()).hexdigest()
        views[(view.probe.logical_probe_id, view.view_id)] = [
            view.file.name,
            stored,
            view.bytes_sha256,
            view.pixels_sha256,
            view.width,
            view.height,
            view.source_image_id,
            view.marks,
            view.affine,
        ]
    run = CompileRun.objects.order_by("-pk").first()
    issues = sorted(
        (i.parent.problem_id, i.task_id, i.code, i.reasons, i.scope, i.group_id, i.detail)
        for i in CompileIssue.objects.filter(run=run).select_related("parent")
    )
    memberships = {
        m.parent.problem_id: [
            m.source_identity,
            m.dedup_group,
            m.representative_id,
            m.dedup_state,
            m.split,
            m.tags,
        ]
        for m in Membership.objects.select_related("parent")
    }
    return {
        "probes": probes,
        "keys": keys,
        "views": views,
        "issues": issues,
        "memberships": memberships,
        "status": run.status,
        "counts": run.counts,
        "progress": (run.done, run.total, run.chunks_done, run.chunks_total),
    }


def reset() -> None:
    Probe.objects.all().delete()
    Membership.objects.all().delete()


def one_process() -> dict:
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False, chunk_size=10_000).pk)
    return dump()


def chunked_in_reverse(size: int) -> dict:
    """Chunks run last first, the way two workers may interleave them; the last to end finishes the run."""
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False, chunk_size=size).pk)
    for chunk in run.chunks.order_by("-number"):
        compile_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    return dump()


def without_progress(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "progress"}


def test_chunked_compiles_equal_the_one_process_compile_byte_for_byte(parents):
    reference = one_process()
    assert reference["status"] == "succeeded"
    assert reference["counts"]["probes"] > 20 and reference["views"]
    codes = {code for _, _, code, *_ in reference["issues"]}
    assert {"DUPLICATE_LOGICAL_ID", "SOURCE_REVIEW_HASH_STALE"} <= codes
    assert reference["progress"] == (11, 11, 1, 1)
    for size in (1, 3):
        reset()
        chunked = chunked_in_reverse(size)
        assert without_progress(chunked) == without_progress(reference), size
        assert chunked["progress"][:2] == (11, 11) and chunked["progress"][2] == chunked["progress"][3] > 1
    # Through Celery (eager here): the run task plans and queues one task per chunk.
    reset()
    run = compile_run_create(actor=None, chunk_size=2)  # enqueued once the transaction commits
    from probes.tasks import compile_run_task

    compile_run_task.delay(run.pk)
    assert without_progress(dump()) == without_progress(reference)
    # Recompiling unchanged parents on top, in chunks, changes nothing but the run.
    assert without_progress(chunked_in_reverse(4)) == without_progress(reference)


def test_parents_sharing_a_source_identity_share_a_chunk():
    parents = [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "d"), (6, "b"), (7, "e")]
    chunks = plan_chunks(parents, 2)
    assert sorted(pk for chunk in chunks for pk in chunk) == list(range(1, 8))
    where = {pk: n for n, chunk in enumerate(chunks) for pk in chunk}
    assert where[1] == where[3] and where[2] == where[6]
    assert all(chunk == sorted(chunk) for chunk in chunks)  # problem_id order inside a chunk
    # the last chunks shrink so workers finish together
    sizes = [len(c) for c in plan_chunks([(n, str(n)) for n in range(100)], 20)]
    assert sum(sizes) == 100 and sizes[0] == 20 and sizes[-1] < 20 and max(sizes) <= 20


def test_a_chunk_whose_worker_died_is_taken_over_and_written_once(parents):
    reference = one_process()
    reset()
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False, chunk_size=3).pk)
    first, *rest = run.chunks.order_by("number")
    # A worker claimed the first chunk and was killed while compiling it: nothing of it was written.
    claim = rows_claim(CHUNK_ROWS, [first.pk], lease_seconds=CHUNK_LEASE_SECONDS)
    assert claim.claimed == [first.pk]
    for chunk in rest:
        compile_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    run.refresh_from_db()
    assert run.status == "running" and run.chunks_done == len(rest)
    assert "chunks done" in run_state(run)
    # While its lease lives, a second delivery leaves the chunk alone (the task asks again later) …
    again = compile_chunk_execute(run_id=run.pk, chunk_id=first.pk)
    assert again.busy == [first.pk] and not again.claimed
    # … once it ran out, the chunk is taken over, written, and the run finished.
    CompileChunk.objects.filter(pk=first.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=CHUNK_LEASE_SECONDS + 1)
    )
    taken = compile_chunk_execute(run_id=run.pk, chunk_id=first.pk)
    assert taken.claimed == [first.pk]
    assert CompileChunk.objects.get(pk=first.pk).claims == 2
    result = dump()
    assert without_progress(result) == without_progress(reference)
    # A message delivered again after the chunk was written changes nothing and counts nothing twice.
    compile_chunk_execute(run_id=run.pk, chunk_id=first.pk)
    assert dump() == result
    assert result["progress"] == (11, 11, run.chunks_total, run.chunks_total)


def test_a_claim_taken_over_while_compiling_writes_nothing(parents, monkeypatch):
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False, chunk_size=100).pk)
    (chunk,) = run.chunks.all()
    compile_for_real = compile_chunks._chunk_compile

    def compile_then_lose_the_claim(chunk, token, progress):
        outputs, timings = compile_for_real(chunk, token, progress)
        CompileChunk.objects.filter(pk=chunk.pk).update(claim_token="another-worker")
        return outputs, timings

    monkeypatch.setattr(compile_chunks, "_chunk_compile", compile_then_lose_the_claim)
    compile_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    assert not Probe.objects.exists() and not CompileIssue.objects.exists()
    run.refresh_from_db()
    assert run.status == "running" and run.done == 0


def test_a_chunk_that_died_three_times_fails_the_run(parents):
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False, chunk_size=3).pk)
    first, second, *_ = run.chunks.order_by("number")
    CompileChunk.objects.filter(pk=first.pk).update(status="running", claims=3, claimed_at=None)
    compile_chunk_execute(run_id=run.pk, chunk_id=first.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "died or failed three times" in run.error
    assert CompileChunk.objects.get(pk=first.pk).status == "failed"
    # the other chunks' tasks no longer compile anything
    assert not compile_chunk_execute(run_id=run.pk, chunk_id=second.pk).claimed
    assert CompileChunk.objects.get(pk=second.pk).claims == 0 and not Probe.objects.exists()


def test_a_claim_that_lost_its_chunk_stops_at_its_next_renewal(parents, monkeypatch):
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False, chunk_size=100, lease_seconds=1).pk)
    (chunk,) = run.chunks.all()
    compiled = []
    compile_for_real = compile_chunks.compile_parent

    def compile_slowly_then_lose_the_claim(source, **kwargs):
        compiled.append(source.problem_id)
        CompileChunk.objects.filter(pk=chunk.pk).update(claim_token="another-worker")
        time.sleep(0.3)  # past a quarter of the lease: the claim is renewed (or found lost) after this parent
        return compile_for_real(source, **kwargs)

    monkeypatch.setattr(compile_chunks, "compile_parent", compile_slowly_then_lose_the_claim)
    compile_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    assert len(compiled) == 1 < len(chunk.parent_ids)
    assert not Probe.objects.exists()
