"""Issue 16 item 3: ``/api/probes/`` lists a summary per probe (``?fields=`` chooses among the detail's
public fields), the full probe stays on its own endpoint, and a release's public records come in cursor
pages. Nothing private is listed."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes.api.views import PROBE_FIELDS, PROBE_SUMMARY_FIELDS
from probes.models import Probe
from probes.releases import release_export
from probes.services import compile_run_create, compile_run_execute, probe_record_review

from . import kit_demo as demo
from .conftest import make_demo_parent

pytestmark = pytest.mark.django_db


@pytest.fixture
def compiled(django_user_model):
    """Two demo parents compiled: six probes."""
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY")
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY_B", sample="SYNTHETIC_TEST_ONLY_B")
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    assert Probe.objects.count() == 6
    return list(Probe.objects.select_related("key", "parent"))


@pytest.fixture
def release(compiled):
    for probe in compiled:
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )
    return release_export(split="development", output=Path(tempfile.mkdtemp()) / "release", actor=None)


def _private_strings(probe: Probe) -> set[str]:
    """What a list must never carry: the key's targets and candidate→entity ids, gold aliases, packet texts."""
    key = probe.key.key
    strings = {r["expected"] for r in key.get("read_targets", [])}
    strings |= {c["id"] for c in key["candidate_map"].values()} | {g["id"] for g in key["gold_targets"]}
    strings |= {e["text"] for e in probe.gold_view.get("recognition_packet", [])}
    strings |= set(probe.key.gold_aliases)
    return {s for s in strings if len(s.strip()) > 2}


def test_the_list_gives_a_summary_and_the_detail_everything(client, scorer, compiled):
    client.force_login(scorer)
    body = client.get("/api/probes/").json()
    assert set(body) == {"next", "previous", "results"} and len(body["results"]) == 6 and body["next"] is None
    ids = [row["logical_probe_id"] for row in body["results"]]
    assert ids == sorted(ids)  # cursor pages by the unique logical probe id
    assert "raw_messages" not in PROBE_SUMMARY_FIELDS and "gold_messages" not in PROBE_SUMMARY_FIELDS
    for row in body["results"]:
        assert tuple(row) == PROBE_SUMMARY_FIELDS
        detail = client.get(f"/api/probes/{row['logical_probe_id']}/").json()
        assert {name: detail[name] for name in PROBE_SUMMARY_FIELDS} == row
        assert detail["raw_messages"]["user"] and "private" in detail  # the detail keeps it all
    assert {row["problem_id"] for row in body["results"]} == {"SYNTHETIC_TEST_ONLY", "SYNTHETIC_TEST_ONLY_B"}
    t03 = next(row for row in body["results"] if row["logical_probe_id"] == demo.T03_IMAGE)
    assert t03["attachment_ids"] == ["V1", "V2", "V3", "img_0"]
    assert set(t03["pools"]) == {"B", "L", "P"}


def test_fields_chooses_among_the_public_fields(client, scorer, compiled):
    client.force_login(scorer)
    body = client.get("/api/probes/?fields=raw_messages, logical_probe_id,,raw_messages").json()
    assert [tuple(row) for row in body["results"]] == [("logical_probe_id", "raw_messages")] * 6
    for row in body["results"]:
        detail = client.get(f"/api/probes/{row['logical_probe_id']}/").json()
        assert row["raw_messages"] == detail["raw_messages"]
    every = client.get("/api/probes/?fields=" + ",".join(PROBE_FIELDS)).json()["results"]
    for row in every:
        detail = client.get(f"/api/probes/{row['logical_probe_id']}/").json()
        assert row == {name: detail[name] for name in PROBE_FIELDS}
    filtered = client.get("/api/probes/?fields=interface&interface=T03-image").json()["results"]
    assert filtered == [{"interface": "T03-image"}] * 2
    blank = client.get("/api/probes/?fields=").json()["results"]
    assert all(tuple(row) == PROBE_SUMMARY_FIELDS for row in blank)


@pytest.mark.parametrize("fields", ["private", "key", "gold_aliases,interface", "metadata", "raw_view", "pk"])
def test_an_unknown_or_private_field_is_a_clear_400(client, scorer, compiled, fields):
    client.force_login(scorer)
    response = client.get(f"/api/probes/?fields={fields}")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    (message,) = body["extra"]["fields"]["fields"]
    named = sorted(set(fields.split(",")) - set(PROBE_FIELDS))
    assert message.startswith(f"Unknown field{'s' if len(named) > 1 else ''}: {', '.join(named)}.")
    assert "Choose among: " + ", ".join(PROBE_FIELDS) in message


def test_nothing_private_in_any_list_even_for_a_scorer(client, scorer, release, compiled):
    client.force_login(scorer)
    bodies = {
        "summary": client.get("/api/probes/").content.decode(),
        "every field": client.get("/api/probes/?fields=" + ",".join(PROBE_FIELDS)).content.decode(),
        "release raw": client.get(f"/api/releases/{release.release_id}/probes/").content.decode(),
        "release gold": client.get(
            f"/api/releases/{release.release_id}/probes/?condition=gold"
        ).content.decode(),
    }
    secrets = set().union(*(_private_strings(p) for p in compiled))
    assert secrets
    for name, body in bodies.items():
        assert '"private"' not in body and "private_mapping" not in body and "candidate_map" not in body, name
        leaks = {s for s in secrets if json.dumps(s)[1:-1] in body}
        # a gold record carries the +GT packet by design; the raw records and the probe lists never do
        if name != "release gold":
            assert not leaks, (name, leaks)
    assert demo.PE_BLOCK_A[:20] not in bodies["summary"]


@pytest.mark.parametrize("fields", [None, *PROBE_FIELDS])
def test_the_list_reads_a_constant_number_of_queries(client, scorer, compiled, fields):
    """Six rows cost what one does: no per-row load of a deferred column or of the parent."""
    client.force_login(scorer)
    choose = f"fields={fields}&" if fields else ""

    def queries(url: str, rows: int) -> list[str]:
        client.get(url)  # session and permission caches warm
        with CaptureQueriesContext(connection) as captured:
            assert len(client.get(url).json()["results"]) == rows
        return [q["sql"] for q in captured.captured_queries]

    one = queries(f"/api/probes/?{choose}parent=SYNTHETIC_TEST_ONLY_B&interface=T02-single", 1)
    six = queries(f"/api/probes/?{choose}", 6)
    assert len(six) == len(one) <= 5, six
    (page,) = [q for q in six if "probes_probe" in q and "COUNT(" not in q]
    for private in ("raw_view", "gold_view", "metadata", "probes_probekey"):
        assert private not in page  # the list never even reads the private columns


def _walk(client, url: str) -> list[dict]:
    records, pages = [], 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"next", "previous", "results"}
        records += body["results"]
        url, pages = body["next"], pages + 1
    return records, pages


@pytest.mark.parametrize("condition", ["raw", "gold"])
def test_release_records_come_in_cursor_pages(client, scorer, release, condition):
    client.force_login(scorer)
    items = release.items.order_by("logical_probe_id")
    expected = [i.public_raw if condition == "raw" else i.public_gold for i in items]
    expected = [r for r in expected if r is not None]
    assert len(expected) >= 2
    whole, pages = _walk(client, f"/api/releases/{release.release_id}/probes/?condition={condition}")
    assert whole == expected and pages == 1
    paged, pages = _walk(
        client, f"/api/releases/{release.release_id}/probes/?condition={condition}&page_size=1"
    )
    assert paged == expected and pages == len(expected)
    first = client.get(f"/api/releases/{release.release_id}/probes/?condition={condition}&page_size=1").json()
    query = parse_qs(urlsplit(first["next"]).query)
    assert query["condition"] == [condition] and query["page_size"] == ["1"] and query["cursor"]
    second = client.get(first["next"]).json()
    assert client.get(second["previous"]).json()["results"] == first["results"]


def test_the_probe_list_and_the_private_mappings_come_in_cursor_pages(client, scorer, release, compiled):
    client.force_login(scorer)
    probes, pages = _walk(client, "/api/probes/?page_size=4&fields=logical_probe_id")
    assert [row["logical_probe_id"] for row in probes] == sorted(p.logical_probe_id for p in compiled)
    assert pages == 2
    mappings, pages = _walk(client, f"/api/releases/{release.release_id}/private/?page_size=1")
    expected = list(release.items.order_by("logical_probe_id").values_list("logical_probe_id", flat=True))
    assert [row["logical_probe_id"] for row in mappings] == expected and pages == len(expected)


@pytest.mark.parametrize("cursor", ["not-a-cursor", "cD0AAA==", "cD1QQVEtAA==", "é"])
def test_a_bad_cursor_is_a_404_not_a_server_error(client, scorer, release, cursor):
    client.force_login(scorer)
    response = client.get(f"/api/releases/{release.release_id}/probes/", {"cursor": cursor})
    assert response.status_code == 404
    assert response.json()["message"] == "Invalid cursor"


def test_the_schema_documents_both_shapes(client, scorer):
    client.force_login(scorer)
    schema = client.get("/api/schema/?format=json").json()
    probes = schema["paths"]["/api/probes/"]["get"]
    assert "fields" in {p["name"] for p in probes["parameters"]}
    page = schema["components"]["schemas"]["PaginatedProbeListItemList"]
    assert page["properties"]["results"]["items"]["$ref"] == "#/components/schemas/ProbeListItem"
    item = schema["components"]["schemas"]["ProbeListItem"]
    assert set(item["properties"]) == set(PROBE_FIELDS) and not item.get("required")
    records = schema["paths"]["/api/releases/{release_id}/probes/"]["get"]
    assert {"cursor", "page_size", "condition"} <= {p["name"] for p in records["parameters"]}
    assert "page" not in {p["name"] for p in records["parameters"]}
    shape = schema["components"]["schemas"]["PaginatedReleaseRecordList"]
    assert set(shape["properties"]) == {"next", "previous", "results"}
    assert shape["properties"]["results"]["items"]["$ref"] == "#/components/schemas/ReleaseRecord"
