"""Compile runs and release exports in words, not keys."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.urls import reverse

from probes.models import CompileRun
from probes.release_words import release_export_message, release_export_sentence
from probes.run_labels import count_rows, humanize_key, run_state, timing_rows


def test_count_and_timing_labels():
    counts = {
        "split_candidate_unassigned_not_release": 15,
        "probes": 170,
        "split_development_reserved": 25,
        "new_thing": 1,
    }
    assert [(r.label, r.value) for r in count_rows(counts)] == [
        ("Probes", 170),
        ("Development parents (reserved)", 25),
        ("Candidate parents (unassigned, not for release)", 15),
        ("New thing", 1),
    ]
    timings = {"render_s": 23.29231, "compile_s": 1.5, "extra_s": 2.0}
    assert [(r.label, r.value) for r in timing_rows(timings)] == [
        ("Compile time (s)", "1.50"),
        ("Render time (s)", "23.29"),
        ("Extra (s)", "2.00"),
    ]
    assert humanize_key("db_s") == "Db (s)"


def test_run_state_before_the_worker_counts():
    queued = CompileRun(status=CompileRun.Status.QUEUED, total=0, done=0)
    assert run_state(queued) == "Queued — waiting for a worker"
    assert (
        run_state(CompileRun(status=CompileRun.Status.RUNNING, total=0)) == "Running — counting the parents"
    )
    assert (
        run_state(CompileRun(status=CompileRun.Status.SUCCEEDED, total=40, done=40))
        == "Succeeded · 40/40 parents"
    )


@pytest.mark.django_db
def test_run_pages_show_labels_not_keys(client, admin_user_role):
    run = CompileRun.objects.create(
        status=CompileRun.Status.SUCCEEDED,
        total=2,
        done=2,
        counts={"probes": 3, "split_candidate_unassigned_not_release": 2},
        timings={"render_s": 0.5},
    )
    queued = CompileRun.objects.create()
    client.force_login(admin_user_role)
    page = client.get(reverse("probes:run_detail", args=[run.pk])).content.decode()
    assert "Candidate parents (unassigned, not for release)" in page and "Render time (s)" in page
    assert ">split_candidate_unassigned_not_release<" not in page and ">render_s<" not in page
    page = client.get(reverse("probes:run_detail", args=[queued.pk])).content.decode()
    assert "Queued — waiting for a worker" in page and "0/0" not in page
    listing = client.get(reverse("probes:run_list")).content.decode()
    assert "Queued — waiting for a worker" in listing and "0/0" not in listing


def test_release_export_sentence_and_message():
    release = SimpleNamespace(
        release_id="NREL-" + "a" * 64,
        split="test",
        artifact_mode="reviewed_data_release",
        counts={"B": {"probes": 6, "mothers": 2}, "L": {"probes": 1, "mothers": 1}},
    )
    assert release_export_sentence(release) == (
        f"NREL-{'a' * 64} exported (test, reviewed_data_release): 6 probes from 2 parent problems in pool B "
        "(grounding) and 1 probe from 1 parent problem in pool L (joint reading)."
    )
    html = str(release_export_message(release))
    assert html.startswith(f'Release <a href="/releases/NREL-{"a" * 64}/"')
    assert "{" not in html and "'probes'" not in html


@pytest.mark.django_db
def test_a_running_chunked_run_shows_its_chunk_counters(client, admin_user_role):
    run = CompileRun.objects.create(
        status=CompileRun.Status.RUNNING, total=986, done=150, chunks_total=20, chunks_done=3
    )
    assert run_state(run) == "Running · 150/986 parents · 3/20 chunks done"
    client.force_login(admin_user_role)
    fragment = client.get(reverse("probes:run_detail", args=[run.pk]), HTTP_HX_REQUEST="true")
    assert "150/986 parents · 3/20 chunks done" in fragment.content.decode()
    api = client.get(reverse("probes-api:compile-run-detail", args=[run.pk]))
    assert api.status_code == 200 and (api.json()["chunks_done"], api.json()["chunks_total"]) == (3, 20)
