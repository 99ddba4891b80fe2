"""Our probe-review decisions leave as a ``physalign_decisions_v1`` file bound to the Kit's roots of an imported
Kit draft (issue 29 item 1): the Kit's file rules accept it, reading it back changes nothing, stale bindings and
Kit-settled probes are left out, key holders only (service, page, API, manage.py)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from audit.models import Disclosure, Event
from kit.canonical import bytes_digest, canonical_bytes, digest, write_json_bytes
from physalign_site.errors import ApplicationError
from probes.compiler import compile_parent
from probes.models import Probe
from review import services
from review.kit_decisions import load_draft, normalize_decisions
from review.models import KitDecision, KitDraftImport, ReviewDecision, Role
from review.selectors import probe_outcome
from review.services import kit_decisions_import, kit_draft_import
from review.services.kit_decisions_export import kit_decisions_export, kit_draft_find
from tests.probes import kit_demo as demo

from .kit_draft_fixture import CONFIRMED, decision, legacy_file, write_kit_draft
from .test_audit_services import reject_serious
from .test_flow import answer_all_blind, approve, gold_blind

NONE = dict.fromkeys(CONFIRMED, False)
NOTE = "[insufficient uniqueness] two owners fit"


@pytest.fixture
def kit(demo_probes, tmp_path):
    """The compiled demo as a Kit draft, imported: every demo probe bound to the Kit's roots."""
    compiled = compile_parent(demo.demo_source()).probes
    catalog = write_kit_draft(tmp_path / "draft", compiled)
    record = kit_draft_import(root=tmp_path / "draft", actor=None)
    assert sorted(record.summary["bound"]) == sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT])
    return {
        "root": tmp_path / "draft",
        "catalog": catalog,
        "record": record,
        "roots": {i["logical_probe_id"]: i["review_target_root"] for i in catalog["probes"]},
    }


def decide_all(slot, user, decide) -> None:
    """Every probe of the slot answered blind (the strict order), then decided by ``decide`` (None: left)."""
    for probe in answer_all_blind(slot, user):
        given = decide(probe)
        if given is not None:
            services.review_decide(slot=slot, probe=probe, reviewer=user, given=given)


def review_here(reviewers) -> None:
    """alice (primary) and bob (secondary): T03-image approved by both, T02 rejected by both (serious),
    T03-text approved by alice and rejected by bob, so it waits for an adjudicator."""

    def primary(probe):
        return reject_serious(probe) if probe.logical_probe_id == demo.T02 else approve(probe)

    def secondary(probe):
        return approve(probe) if probe.logical_probe_id == demo.T03_IMAGE else reject_serious(probe)

    for user, role, decide in (("alice", Role.PRIMARY, primary), ("bob", Role.SECONDARY, secondary)):
        slot = services.review_claim(reviewer=reviewers[user], role=role, context="development")
        decide_all(slot, reviewers[user], decide)
    assert {p.logical_probe_id: p.state for p in Probe.objects.all()} == {
        demo.T02: "rejected",
        demo.T03_IMAGE: "approved",
        demo.T03_TEXT: "pending_review",
    }


def blind_of(username: str, qid: str) -> str:
    """The Kit's free-text blind answer: our stored answer as sorted JSON."""
    row = ReviewDecision.objects.get(reviewer__username=username, probe__logical_probe_id=qid)
    return json.dumps(row.blind.answer, ensure_ascii=False, sort_keys=True)


def states():
    return {p.logical_probe_id: (p.state, p.packet_state, p.in_p) for p in Probe.objects.all()}


def reimport(data: bytes, *, actor=None):
    return kit_decisions_import(document=json.loads(data), file_bytes_sha256=bytes_digest(data), actor=actor)


@pytest.fixture
def key_admin(key_holder):
    return key_holder


# --- the file ---------------------------------------------------------------------------------------------


def test_the_file_holds_each_bound_probes_decision_of_record_on_the_kits_roots(kit, reviewers, key_admin):
    review_here(reviewers)
    result = kit_decisions_export(draft=kit["record"], actor=key_admin)
    roots = kit["roots"]
    expected = {
        "schema_version": "physalign_decisions_v1",
        "catalog_root": digest(kit["catalog"]),
        "decisions": [
            {
                "logical_probe_id": demo.T03_IMAGE,
                "review_target_root": roots[demo.T03_IMAGE],
                "status": "approved",
                "reviewer": "alice",
                "blind_answer": '{"owner": ["E2"], "read": {"R1": "m"}}',  # our answer as sorted JSON
                "confirmations": CONFIRMED,
                "note": "",
            },
            {
                "logical_probe_id": demo.T02,
                "review_target_root": roots[demo.T02],
                "status": "rejected",
                "reviewer": "alice",
                "blind_answer": '{"referent": ["E2"]}',
                "confirmations": NONE,
                "note": NOTE,
            },
            {  # a dispute waiting for its adjudicator is not settled: pending, as a partly filled Kit form
                "logical_probe_id": demo.T03_TEXT,
                "review_target_root": roots[demo.T03_TEXT],
                "status": "pending",
                "reviewer": "",
                "blind_answer": "",
                "confirmations": NONE,
                "note": "",
            },
        ],
    }
    assert sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT]) == [demo.T03_IMAGE, demo.T02, demo.T03_TEXT]
    assert json.loads(result.data) == expected
    assert result.data == canonical_bytes(expected) + b"\n" == write_json_bytes(expected)
    assert (result.decided, result.pending, result.left_out) == (
        sorted([demo.T02, demo.T03_IMAGE]),
        [demo.T03_TEXT],
        {},
    )
    assert result.sha256 == bytes_digest(result.data)
    assert result.filename == f"physalign_decisions_{digest(kit['catalog'])[:12]}.json"
    # the Kit's roots, never ours; and the blind answers are the gold ones here (gold_blind)
    ours = {p.logical_probe_id: p.review_target_root for p in Probe.objects.all()}
    assert all(ours[q] != roots[q] for q in roots)
    # the Kit's rules (check_review, as our import applies them) accept it against the draft on disk
    accepted = normalize_decisions(json.loads(result.data), load_draft(kit["root"]))
    assert {q: d["status"] for q, d in accepted.items()} == {
        demo.T02: "rejected",
        demo.T03_IMAGE: "approved",
        demo.T03_TEXT: "pending",
    }
    # deterministic: the same state gives the same bytes
    assert kit_decisions_export(draft=kit["record"], actor=key_admin).data == result.data
    event = Event.objects.filter(verb="review.kit_decisions_export").first()
    assert event is not None and event.actor == key_admin and event.object_id == str(kit["record"].pk)
    assert event.after == {
        "catalog_root": digest(kit["catalog"]),
        "file_sha256": result.sha256,
        "decided": sorted([demo.T02, demo.T03_IMAGE]),
        "pending": [demo.T03_TEXT],
        "left_out": {},
    }
    shown = set(
        Disclosure.objects.filter(user=key_admin, where="kit-decisions-export").values_list(
            "logical_probe_id", flat=True
        )
    )
    assert shown == {demo.T02, demo.T03_IMAGE}  # the decided probes: their blind answers next to decisions


def test_reading_the_file_back_settles_nothing_and_writes_nothing(kit, reviewers):
    review_here(reviewers)
    before, decisions = states(), ReviewDecision.objects.count()
    data = kit_decisions_export(draft=kit["record"], actor=None).data
    report = reimport(data)
    assert (report.imported, report.unchanged, report.pending, report.settled) == (
        [],
        sorted([demo.T02, demo.T03_IMAGE]),
        [demo.T03_TEXT],
        {},
    )
    assert not KitDecision.objects.exists()  # our own decisions are not a Kit team's evidence
    assert states() == before and ReviewDecision.objects.count() == decisions
    # the same file with one decision changed by a Kit reviewer is theirs: recorded as Kit evidence
    changed = json.loads(data)
    changed["decisions"][0]["note"] = "[minor flaw] box slightly large"
    report = reimport(write_json_bytes(changed))
    assert (report.imported, report.settled) == ([demo.T03_IMAGE], {})
    assert KitDecision.objects.get().kit_reviewer == "alice" and states() == before


def test_the_adjudicators_resolution_is_the_decision_of_record(kit, reviewers):
    review_here(reviewers)
    carol = reviewers["carol"]
    slot = services.review_claim(reviewer=carol, role=Role.ADJUDICATOR, context="development")
    target = Probe.objects.get(logical_probe_id=demo.T03_TEXT)
    services.review_submit_blind(slot=slot, probe=target, reviewer=carol, given=gold_blind(target))
    services.review_decide(slot=slot, probe=target, reviewer=carol, given=approve(target))
    assert probe_outcome(target, "development").state == "approved"
    document = json.loads(kit_decisions_export(draft=kit["record"], actor=None).data)
    text = next(d for d in document["decisions"] if d["logical_probe_id"] == demo.T03_TEXT)
    assert text == {
        "logical_probe_id": demo.T03_TEXT,
        "review_target_root": kit["roots"][demo.T03_TEXT],
        "status": "approved",
        "reviewer": "carol",
        "blind_answer": blind_of("carol", demo.T03_TEXT),
        "confirmations": CONFIRMED,
        "note": "",
    }
    report = reimport(write_json_bytes(document))
    assert (report.unchanged, report.imported) == (sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT]), [])


def test_nothing_decided_yet_gives_every_bound_probe_pending(kit):
    document = json.loads(kit_decisions_export(draft=kit["record"], actor=None).data)
    assert document["decisions"] == [
        {
            "logical_probe_id": q,
            "review_target_root": kit["roots"][q],
            "status": "pending",
            "reviewer": "",
            "blind_answer": "",
            "confirmations": NONE,
            "note": "",
        }
        for q in sorted(kit["roots"])
    ]
    assert reimport(write_json_bytes(document)).pending == sorted(kit["roots"])


def test_a_stale_binding_is_left_out(kit, reviewers):
    review_here(reviewers)
    # T03-image changed here since the draft was checked (a recompile gives a new root), T02 was superseded
    Probe.objects.filter(logical_probe_id=demo.T03_IMAGE).update(review_target_root="b" * 64)
    Probe.objects.filter(logical_probe_id=demo.T02).update(state=Probe.State.SUPERSEDED)
    result = kit_decisions_export(draft=kit["record"], actor=None)
    document = json.loads(result.data)
    assert [d["logical_probe_id"] for d in document["decisions"]] == [demo.T03_TEXT]
    assert result.left_out == {"stale": sorted([demo.T02, demo.T03_IMAGE])}
    assert normalize_decisions(document, load_draft(kit["root"])).keys() == {demo.T03_TEXT}


def test_a_probe_settled_only_by_a_kit_file_is_left_out(kit, reviewers):
    """A Kit team's decision is theirs (in their own file already): never written again as ours."""
    item = next(i for i in kit["catalog"]["probes"] if i["logical_probe_id"] == demo.T03_IMAGE)
    doc = legacy_file(kit["catalog"], [decision(item)])
    kit_decisions_import(document=doc, file_bytes_sha256=bytes_digest(canonical_bytes(doc)), actor=None)
    assert Probe.objects.get(logical_probe_id=demo.T03_IMAGE).state == "approved"
    result = kit_decisions_export(draft=kit["record"], actor=None)
    assert result.left_out == {"kit_decision": [demo.T03_IMAGE]}
    assert result.pending == sorted([demo.T02, demo.T03_TEXT]) and result.decided == []
    assert "Kit Reviewer A" not in result.data.decode()


def test_probes_outside_the_drafts_development_split_are_left_out(demo_probes, tmp_path):
    compiled = compile_parent(demo.demo_source()).probes
    write_kit_draft(tmp_path / "d", compiled, split="candidate_unassigned_not_release")
    record = kit_draft_import(root=tmp_path / "d", actor=None)
    result = kit_decisions_export(draft=record, actor=None)
    assert json.loads(result.data)["decisions"] == []
    assert result.left_out == {"not_development": sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT])}


def test_only_key_holders_export(kit, reviewers, role_users, django_user_model):
    for role in ("annotator", "source_reviewer", "probe_reviewer", "adjudicator", "admin"):
        with pytest.raises(ApplicationError) as error:
            kit_decisions_export(draft=kit["record"], actor=role_users[role])
        assert (error.value.code, error.value.status_code) == ("KEY_HOLDER_REQUIRED", 403)
    assert not Event.objects.filter(verb="review.kit_decisions_export").exists()
    assert not Disclosure.objects.exists()


def test_a_draft_is_found_by_its_root_or_a_unique_prefix(kit):
    root = kit["record"].catalog_root
    assert kit_draft_find(catalog_root=root) == kit["record"]
    assert kit_draft_find(catalog_root=root[:6].upper()) == kit["record"]
    twin = KitDraftImport.objects.create(catalog_root=root[:4] + "0" * 60, catalog={"probes": []})
    with pytest.raises(ApplicationError) as error:
        kit_draft_find(catalog_root=root[:4])
    assert error.value.code == "KIT_DRAFT_AMBIGUOUS"
    assert error.value.extra["matches"] == sorted([root, twin.catalog_root])
    for wanted, code in (
        ("f" * 64, "KIT_DRAFT_UNKNOWN"),
        ("abc", "KIT_DRAFT_UNKNOWN"),
        ("PAQ-12", "KIT_DRAFT_UNKNOWN"),
    ):
        with pytest.raises(ApplicationError) as error:
            kit_draft_find(catalog_root=wanted)
        assert (error.value.code, error.value.status_code) == (code, 404)


# --- over HTTP: the page's download and the API ----------------------------------------------------------


def _urls(root: str) -> dict[str, str]:
    return {
        "page": f"/review/kit-decisions/export/?draft={root}",
        "api": f"/api/review/kit-drafts/{root}/decisions/",
    }


def test_the_download_and_the_api_are_for_admin_key_holders_only(kit, reviewers, role_users, key_admin):
    review_here(reviewers)
    urls = _urls(kit["record"].catalog_root)
    expected = kit_decisions_export(draft=kit["record"], actor=None).data
    exports = Event.objects.filter(verb="review.kit_decisions_export")
    assert exports.count() == 1  # the operator's, just now
    for role in ("annotator", "source_reviewer", "probe_reviewer", "adjudicator", "admin"):
        client = APIClient()
        client.force_login(role_users[role])
        for kind, url in urls.items():
            response = client.get(url)
            assert response.status_code == 403, (role, kind, response.status_code)
            assert b"blind_answer" not in response.content and b"alice" not in response.content
    anonymous = APIClient()
    assert anonymous.get(urls["page"]).status_code == 302
    assert anonymous.get(urls["api"]).status_code == 401
    assert exports.count() == 1 and not Disclosure.objects.exists()

    client = APIClient()
    client.force_login(key_admin)
    for kind, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (kind, response.content[:300])
        assert response["Content-Type"] == "application/json"
        assert response["Content-Disposition"] == (
            f'attachment; filename="physalign_decisions_{kit["record"].catalog_root[:12]}.json"'
        )
        assert response.content == expected
    assert Event.objects.filter(verb="review.kit_decisions_export", actor=key_admin).count() == 2


def test_the_page_lists_a_download_per_draft_and_explains_a_bad_one(client, kit, key_admin):
    client.force_login(key_admin)
    page = client.get("/review/kit-decisions/").content.decode()
    assert f'href="/review/kit-decisions/export/?draft={kit["record"].catalog_root}"' in page
    response = client.get("/review/kit-decisions/export/?draft=" + "f" * 64, follow=True)
    assert response.redirect_chain == [("/review/kit-decisions/", 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "No imported Kit draft has this catalog root: import the draft first. (KIT_DRAFT_UNKNOWN)"
    ]
    response = client.get("/review/kit-decisions/export/", follow=True)
    assert "(KIT_DRAFT_UNKNOWN)" in [str(m) for m in response.context["messages"]][0]


def test_the_api_refuses_an_unknown_or_ambiguous_draft(kit, key_admin):
    client = APIClient()
    client.force_login(key_admin)
    response = client.get("/api/review/kit-drafts/" + "f" * 64 + "/decisions/")
    assert (response.status_code, response.json()["code"]) == (404, "KIT_DRAFT_UNKNOWN")
    root = kit["record"].catalog_root
    KitDraftImport.objects.create(catalog_root=root[:4] + "0" * 60, catalog={"probes": []})
    response = client.get(f"/api/review/kit-drafts/{root[:4]}/decisions/")
    assert (response.status_code, response.json()["code"]) == (400, "KIT_DRAFT_AMBIGUOUS")
    assert client.get(f"/api/review/kit-drafts/{root[:5]}/decisions/").status_code == 200


# --- manage.py ----------------------------------------------------------------------------------------


def test_the_command_writes_the_file_and_refuses_to_overwrite_it(kit, reviewers, tmp_path, capsys):
    review_here(reviewers)
    root = kit["record"].catalog_root
    output = tmp_path / "out" / "decisions.json"
    output.parent.mkdir()
    call_command("export_kit_decisions", "--draft", root[:10], "--output", str(output))
    data = output.read_bytes()
    assert data == kit_decisions_export(draft=kit["record"], actor=None).data
    out = capsys.readouterr().out
    assert f"catalog {root}: wrote {output} ({len(data)} bytes, sha256 {bytes_digest(data)}): " in out
    assert "decided 2, pending 1" in out
    event = Event.objects.filter(verb="review.kit_decisions_export").first()
    assert event is not None and event.actor is None

    output.write_bytes(b"keep me")
    with pytest.raises(CommandError, match="exists: pass --force"):
        call_command("export_kit_decisions", "--draft", root, "--output", str(output))
    assert output.read_bytes() == b"keep me"
    call_command("export_kit_decisions", "--draft", root, "--output", str(output), "--force")
    assert output.read_bytes() == data

    with pytest.raises(CommandError, match="KIT_DRAFT_UNKNOWN"):
        call_command("export_kit_decisions", "--draft", "f" * 64, "--output", str(tmp_path / "x.json"))
    KitDraftImport.objects.create(catalog_root=root[:4] + "0" * 60, catalog={"probes": []})
    with pytest.raises(CommandError, match="KIT_DRAFT_AMBIGUOUS"):
        call_command("export_kit_decisions", "--draft", root[:4], "--output", str(tmp_path / "x.json"))
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(CommandError, match="is a folder"):
        call_command("export_kit_decisions", "--draft", root, "--output", str(tmp_path), "--force")
    # the file the command wrote reads back through the import command: nothing new
    call_command("import_kit_decisions", str(output))
    assert "imported 0, already imported 2, pending 1, settled 0" in capsys.readouterr().out


def test_a_decision_is_ours_only_when_every_field_a_file_carries_is_ours():
    from review.kit_decisions import is_decision_made_here

    ours = {
        "status": "rejected",
        "reviewer": "alice",
        "blind_answer": '{"referent": ["E2"]}',
        "confirmations": NONE,
        "note": NOTE,
        "severity": "serious",
        "sequence": 2,
    }
    legacy = {**ours, "severity": "unresolved", "sequence": None}  # a legacy file's derived severity
    assert is_decision_made_here(legacy, ours, legacy=True)
    assert not is_decision_made_here(legacy, ours, legacy=False)  # a native file states its own
    assert is_decision_made_here(dict(ours), ours, legacy=False)
    for field, other in (("reviewer", "Alice"), ("note", NOTE + "."), ("status", "approved")):
        assert not is_decision_made_here({**legacy, field: other}, ours, legacy=True), field
    assert not is_decision_made_here(
        {**legacy, "confirmations": {**NONE, "source_semantics": True}}, ours, legacy=True
    )
