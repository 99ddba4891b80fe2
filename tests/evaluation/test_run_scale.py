"""Evaluation runs at scale (issue 16 items 1–2): items streamed and identical to the records the old
one-query implementation made, the item file written once and served as a file (rebuilt only by a rescore),
progress counters that equal a recount of the rows, and pages whose query count does not grow with the data
(the same bound on a small fixture and on one with 10× the runs and 10× the rows per run)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.db import connections, transaction
from django.db.models import Count, Sum
from django.test import Client
from django.utils import timezone

from evaluation import runs as runs_pkg
from evaluation import selectors
from evaluation.models import EvalRequest, EvalRun
from evaluation.runs import (
    eval_chunk_process,
    eval_run_create,
    eval_run_dispatch,
    eval_run_rescore,
    execution,
    run_items,
    run_progress,
)
from evaluation.runs import results as results_module
from evaluation.runs.progress import progress_rows_ended
from kit.nearest import controls_choice
from tests.conftest import make_user
from tests.factories import scripted
from tests.migration_helpers import back_to_latest  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


# ------------------------------------------------------------------------------------------------ oracles
def _old_nearest_outcome(probe) -> str:
    nearest = (probe.metadata or {}).get("nearest_region") or {}
    alias = controls_choice(nearest, [c["alias"] for c in probe.raw_view.get("candidates", [])])
    if alias is None:
        return "not_applicable"
    return "correct" if alias in probe.key.gold_aliases else "wrong"


def _old_run_items(run: EvalRun) -> list[dict]:
    """``run_items`` as it was before it streamed (every row joined to its full probe, parent and key)."""
    rows = (
        run.requests.filter(status__in=EvalRequest.TERMINAL)
        .select_related("model", "probe__parent", "probe__key", "score")
        .order_by("pk")
    )
    items = []
    for row in rows:
        probe = row.probe
        s = getattr(row, "score", None)
        items.append(
            {
                "model": row.model.name,
                "condition": row.condition,
                "probe_id": probe.logical_probe_id,
                "parent_id": probe.parent.problem_id,
                "task_id": probe.task_id,
                "interface": probe.interface,
                "pools": row.pools,
                "status": s.status if s else row.status,
                "C": s.C if s else None,
                "G": s.G if s else None,
                "K": len(probe.key.view.candidate_map),
                "gold_alias_count": len(probe.key.gold_aliases),
                "nearest": _old_nearest_outcome(probe),
            }
        )
    return items


def _old_item_file(run: EvalRun) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in _old_run_items(run)).encode()


def _recount(run: EvalRun) -> dict:
    """What ``run_progress`` counted from the rows before the counters existed."""
    counts = dict(run.requests.values_list("status").annotate(n=Count("pk")).order_by())
    agg = run.requests.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))
    return {
        "by_status": counts,
        "done": sum(counts.get(s, 0) for s in EvalRequest.TERMINAL),
        "input_tokens": agg["i"] or 0,
        "output_tokens": agg["o"] or 0,
        "cost_usd": agg["c"] or Decimal(0),
    }


def _progress(run: EvalRun) -> dict:
    p = run_progress(EvalRun.objects.get(pk=run.pk))
    return {
        "by_status": p.by_status,
        "done": p.done,
        "input_tokens": p.input_tokens,
        "output_tokens": p.output_tokens,
        "cost_usd": p.cost_usd,
    }


# ------------------------------------------------------------------------------------------------ fixtures
def _good_answer(probe) -> str:
    key = probe.key.key
    answer = {key["response_contract"]["binding_key"]: probe.key.gold_aliases[0]}
    if key["read_targets"]:
        answer["read"] = key["read_targets"][0]["expected"]
    return json.dumps(answer)


def _models(probes) -> list[str]:
    """Models whose rows end in every final status: completed (right and wrong), unparseable, truncated,
    refusal-free infra_missing (503s), each with prices so rows carry dollars."""
    good = scripted(
        "m-good", [{"match": p.raw_messages["user"][-400:], "outputs": [_good_answer(p)]} for p in probes]
    )
    bad = scripted("m-bad", [], default="not json")
    trunc = scripted("m-trunc", [], default={"text": "{", "finish_reason": "length"})
    down = scripted("m-down", [{"outputs": [{"error": 503}]}])
    for config in (good, bad, trunc, down):
        config.price_in_per_mtok, config.price_out_per_mtok = Decimal("3.5"), Decimal("12")
        config.save()
    return [c.name for c in (good, bad, trunc, down)]


@pytest.fixture
def finished_run(approved_probes, eager):
    names = _models(approved_probes)
    run = eval_run_create(
        model_names=names, conditions=["raw", "gold", "no_image"], start=False, options={"resamples": 20}
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    return run


@pytest.fixture
def admin_client(django_user_model):
    client = Client()
    from django.contrib.auth.models import Permission

    boss = make_user(django_user_model, "boss", "admin")  # a key holder: the item file tells the targets
    boss.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    client.force_login(boss)
    return client


# ------------------------------------------------------------------------------------------------ items
def test_streamed_items_are_the_old_records_and_the_file_is_their_bytes(finished_run, monkeypatch):
    run = finished_run
    old = _old_run_items(run)
    assert {i["status"] for i in old} >= {"completed", "unparseable", "truncated", "infra_missing"}
    assert {i["nearest"] for i in old} - {"not_applicable"}, "the fixture exercises the nearest control"
    assert list(run_items(run)) == old
    monkeypatch.setattr(results_module, "ITEM_CHUNK", 3)  # many chunks, probes met again in later ones
    assert list(run_items(run)) == old
    with run.items_file.open("rb") as handle:
        assert handle.read() == _old_item_file(run)


def test_items_read_each_probe_once_in_a_constant_number_of_queries(
    finished_run, django_assert_max_num_queries, monkeypatch
):
    monkeypatch.setattr(results_module, "ITEM_CHUNK", 10**6)
    with django_assert_max_num_queries(3):  # model names, one chunk of rows, its probes' facts
        assert len(list(run_items(finished_run))) == finished_run.total


def test_the_item_file_is_written_once_and_served_without_recomputing(
    finished_run, admin_client, monkeypatch
):
    run = finished_run
    expected = _old_item_file(run)
    assert run.items_file.name.startswith(f"eval_runs/run-{run.pk}-items")

    def fail(*args, **kwargs):
        raise AssertionError("the items were computed again")

    monkeypatch.setattr(results_module, "run_items", fail)
    monkeypatch.setattr("evaluation.views.run_items", fail)
    for fmt in ("items", "jsonl"):
        response = admin_client.get(f"/runs/{run.pk}/download/{fmt}/")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/x-ndjson"
        assert response["Content-Disposition"] == f'attachment; filename="run-{run.pk}-items.jsonl"'
        assert b"".join(response.streaming_content) == expected


def test_a_run_scored_before_item_files_gets_one_on_its_first_download_only(
    finished_run, admin_client, monkeypatch
):
    run = finished_run
    run.items_file.storage.delete(run.items_file.name)
    EvalRun.objects.filter(pk=run.pk).update(items_file="")
    expected = _old_item_file(run)
    first = admin_client.get(f"/runs/{run.pk}/download/items/")
    assert b"".join(first.streaming_content) == expected
    stored = EvalRun.objects.get(pk=run.pk).items_file
    assert stored.name and stored.storage.exists(stored.name)
    monkeypatch.setattr(results_module, "run_items", lambda run: pytest.fail("built twice"))
    second = admin_client.get(f"/runs/{run.pk}/download/items/")
    assert b"".join(second.streaming_content) == expected


def test_rescore_rebuilds_the_item_file(finished_run, admin_client, django_capture_on_commit_callbacks):
    run = finished_run
    before = run.items_file.name
    row = run.requests.filter(model__name="m-bad", condition="raw").select_related("probe__key").first()
    EvalRequest.objects.filter(pk=row.pk).update(raw_output=_good_answer(row.probe))
    with django_capture_on_commit_callbacks(execute=True):
        eval_run_rescore(run=run)
    run.refresh_from_db()
    assert run.items_file.name != before and not run.items_file.storage.exists(before)
    served = b"".join(admin_client.get(f"/runs/{run.pk}/download/items/").streaming_content)
    assert served == _old_item_file(run)
    mine = [json.loads(line) for line in served.splitlines()]
    assert any(i["model"] == "m-bad" and i["status"] == "completed" and i["G"] == 1 for i in mine)


def test_a_run_still_running_streams_the_rows_ended_so_far(approved_probes, eager, admin_client):
    scripted("m", [], default="{}")
    run = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    EvalRun.objects.filter(pk=run.pk).update(status="running")
    first = run.requests.order_by("pk").first()
    eval_chunk_process(run_id=run.pk, request_ids=[first.pk])
    response = admin_client.get(f"/runs/{run.pk}/download/items/")
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content)
    assert body == _old_item_file(run) and body.count(b"\n") == 1
    assert not EvalRun.objects.get(pk=run.pk).items_file


def test_the_item_download_keeps_its_role_check(finished_run, django_user_model):
    client = Client()
    client.force_login(make_user(django_user_model, "rev", "probe_reviewer"))
    assert client.get(f"/runs/{finished_run.pk}/download/items/").status_code == 403


# ------------------------------------------------------------------------------------------------ counters
@pytest.mark.parametrize("path", ["one_statement", "orm"])
def test_counters_equal_a_recount_through_every_way_a_row_ends(approved_probes, eager, path, monkeypatch):
    if path == "orm":  # the portable store (SQLite in development) adds the same way
        monkeypatch.setattr(execution, "connection", SimpleNamespace(vendor="portable"))
    names = _models(approved_probes)
    run = eval_run_create(
        model_names=names,
        conditions=["raw", "no_image"],
        start=False,
        options={"resamples": 20, "claim_lease_seconds": 60},
    )
    # one row whose three claims all died: the exhausted path of the claim ends it as infra_missing
    lost = run.requests.filter(model__name="m-good").order_by("pk").first()
    EvalRequest.objects.filter(pk=lost.pk).update(
        status="running", claims=3, claim_token="dead", claimed_at=timezone.now() - timedelta(seconds=61)
    )
    assert _progress(run) == _recount(run)  # nothing ended yet: pending and one running row
    assert _progress(run)["by_status"] == {"pending": run.total - 1, "running": 1}
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    lost.refresh_from_db()
    assert lost.status == "infra_missing" and lost.error == "worker lost the request three times"
    recount = _recount(run)
    assert recount["input_tokens"] > 0 and recount["cost_usd"] > 0
    assert set(recount["by_status"]) >= {"completed", "unparseable", "truncated", "infra_missing"}
    assert _progress(run) == recount
    # a redelivered chunk writes nothing and adds nothing
    eval_chunk_process(run_id=run.pk, request_ids=list(run.requests.values_list("pk", flat=True)))
    assert _progress(run) == recount


def test_rescore_recounts_rows_that_changed_status(finished_run):
    run = finished_run
    rows = run.requests.filter(model__name="m-bad").select_related("probe__key")
    for row in rows:
        EvalRequest.objects.filter(pk=row.pk).update(raw_output=_good_answer(row.probe))
    before = _progress(run)
    eval_run_rescore(run=run)
    after = _progress(run)
    assert after == _recount(run)
    assert after["by_status"]["completed"] == before["by_status"]["completed"] + rows.count()


def test_a_store_that_skips_rows_recounts_instead_of_adding(finished_run):
    run = finished_run
    row = run.requests.filter(status="completed").first()
    with transaction.atomic():  # one row given, none written: the counters are recounted, not added to
        progress_rows_ended([row], written=0)
    assert _progress(run) == _recount(run)


@pytest.mark.django_db(transaction=True)
def test_concurrent_additions_are_never_lost(django_user_model):
    run = EvalRun.objects.create(total=400)
    threads, calls = 4, 25

    def add() -> None:
        try:
            for _ in range(calls):
                rows = [
                    EvalRequest(run_id=run.pk, status="completed", input_tokens=3, output_tokens=2),
                    EvalRequest(run_id=run.pk, status="infra_missing", cost_usd=Decimal("0.00000001")),
                ]
                with transaction.atomic():
                    progress_rows_ended(rows, written=2)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=add) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    run.refresh_from_db()
    n = threads * calls
    assert (run.done_completed, run.done_infra_missing) == (n, n)
    assert (run.input_tokens, run.output_tokens, run.cost_usd) == (3 * n, 2 * n, Decimal("0.00000001") * n)


# ------------------------------------------------------------------------------------------------ pages
SIZES = {"small": 1, "large": 10}  # finished runs, and models per run (rows per run grow with models)
# what each page runs (session, user and groups included); the same at both sizes. A page with the menu asks the
# key-holder permission once (+2: the user's own and their groups' permissions); the items page also records
# that the rows' probes were shown (+1, one insert)
BOUND = {
    "runs": 11,
    "detail": 8,
    "detail_open": 9,  # + the running rows' count
    "progress": 4,
    "progress_open": 5,
    "items": 9,
    "items_late": 10,  # + whether a page comes before
    "items_filtered": 9,
    "api_list": 5,
    "api_detail": 6,
}


def _scale(approved_probes, n: int) -> dict:
    """``n`` finished runs of ``n`` models each (raw + no_image on every probe), and one open run of the same
    models whose rows are half pending, one running."""
    names = [scripted(f"scale-{i:02d}", [], default="{}").name for i in range(n)]
    finished = []
    for _ in range(n):
        run = eval_run_create(
            model_names=names, conditions=["raw", "no_image"], start=False, options={"resamples": 20}
        )
        eval_run_dispatch(run_id=run.pk)
        finished.append(run.pk)
    open_run = eval_run_create(
        model_names=names, conditions=["raw", "no_image"], start=False, options={"resamples": 20}
    )
    EvalRun.objects.filter(pk=open_run.pk).update(status="running", started_at=timezone.now())
    ids = list(open_run.requests.order_by("pk").values_list("pk", flat=True))
    eval_chunk_process(run_id=open_run.pk, request_ids=ids[: len(ids) // 2])
    EvalRequest.objects.filter(pk=ids[-1]).update(status="running", claims=1, claimed_at=timezone.now())
    assert EvalRun.objects.filter(pk__in=finished, status="completed").count() == n
    last = finished[-1]
    late = list(EvalRequest.objects.filter(run_id=last).order_by("pk").values_list("pk", flat=True))[-3]
    return {
        "runs": "/runs/",
        "detail": f"/runs/{last}/",
        "detail_open": f"/runs/{open_run.pk}/",
        "progress": f"/runs/{last}/progress/",
        "progress_open": f"/runs/{open_run.pk}/progress/",
        "items": f"/runs/{last}/items/",
        "items_late": f"/runs/{last}/items/?after={late}",
        "items_filtered": f"/runs/{last}/items/?model={names[-1]}&condition=no_image&status=unparseable",
        "api_list": "/api/eval/runs/",
        "api_detail": f"/api/eval/runs/{open_run.pk}/",
    }


@pytest.mark.parametrize("size", SIZES)
def test_run_pages_run_a_bounded_number_of_queries(
    approved_probes, eager, admin_client, size, django_assert_max_num_queries
):
    pages = _scale(approved_probes, SIZES[size])
    total = EvalRequest.objects.count()
    assert total >= SIZES[size] ** 2 * 2 * len(approved_probes)
    for name, url in pages.items():
        admin_client.get(url)  # warm: sessions, content types
        with django_assert_max_num_queries(BOUND[name]):
            response = admin_client.get(url)
        assert response.status_code == 200, (name, response.status_code)


def test_items_pages_walk_every_row_by_key_and_keep_the_filters(
    approved_probes, eager, admin_client, monkeypatch
):
    monkeypatch.setattr(selectors, "PAGE_SIZE", 4)
    names = [scripted(f"walk-{i}", [], default="{}").name for i in range(5)]
    run = eval_run_create(model_names=names, conditions=["raw", "no_image"], start=False)
    eval_run_dispatch(run_id=run.pk)
    expected = list(run.requests.filter(condition="raw").order_by("pk").values_list("pk", flat=True))
    assert len(expected) > 2 * 4 and len(expected) % 4, "several pages, the last one short"
    base = f"/runs/{run.pk}/items/?condition=raw"
    seen, url, pages = [], base, 0
    while url:
        response = admin_client.get(url)
        page = response.context["page"]
        seen += [r.pk for r in page.rows]
        pages += 1
        assert (page.previous_before is None) == (pages == 1)
        url = f"{base}&after={page.next_after}" if page.next_after else None
    assert seen == expected and pages == -(-len(expected) // 4)
    back = admin_client.get(f"{base}&before={expected[-1] + 1}").context["page"]
    assert [r.pk for r in back.rows] == expected[-4:] and back.next_after is None
    assert back.previous_before == expected[-4]
    previous = admin_client.get(f"{base}&before={back.previous_before}")
    assert [r.pk for r in previous.context["page"].rows] == expected[-8:-4]
    html = previous.content.decode()
    # the links keep the filter and name the neighbouring keys; each row links to its request
    assert f"?condition=raw&amp;after={expected[-5]}" in html
    assert f"?condition=raw&amp;before={expected[-8]}" in html
    assert f"/eval-requests/{expected[-8]}/" in html
    empty = admin_client.get(f"{base}&after={expected[-1]}").context["page"]
    assert empty.rows == [] and empty.previous_before == expected[-1] + 1 and empty.next_after is None


def test_runs_progress_matches_run_progress(finished_run):
    assert runs_pkg.runs_progress([finished_run]) == [run_progress(finished_run)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_the_migration_counts_what_runs_made_before_the_counters(approved_probes, eager):
    from tests.migration_helpers import migrate_to, migrate_to_latest

    names = _models(approved_probes)
    run = eval_run_create(model_names=names, conditions=["raw"], start=False, options={"resamples": 20})
    eval_run_dispatch(run_id=run.pk)
    empty = eval_run_create(model_names=names[:1], conditions=["raw"], start=False)
    expected = {pk: _progress(EvalRun.objects.get(pk=pk)) for pk in (run.pk, empty.pk)}
    assert expected[run.pk] == _recount(run) and expected[run.pk]["cost_usd"] > 0
    migrate_to([("evaluation", "0005_solving_moves_to_its_app")])  # the counters' columns are gone
    migrate_to_latest()  # and come back, counted from the rows
    assert {pk: _progress(EvalRun.objects.get(pk=pk)) for pk in expected} == expected
