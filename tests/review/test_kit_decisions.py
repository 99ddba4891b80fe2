"""Importing Kit review-decision files onto our probes through an imported Kit draft (issue 13 item 4)."""

from __future__ import annotations

import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from audit.models import Event
from kit.canonical import bytes_digest, canonical_bytes, digest
from physalign_site.errors import ApplicationError
from probes.compiler import compile_parent
from probes.models import Probe
from review.models import KitDecision, KitProbeBinding
from review.services import kit_decisions_import, kit_draft_import
from tests.probes import kit_demo as demo

from .kit_draft_fixture import CONFIRMED, decision, legacy_file, write_kit_draft


@pytest.fixture(autouse=True)
def _the_admin_holds_the_key(reviewers):
    """A Kit draft carries every probe's key: importing it is for key holders (admin + the permission)."""
    from django.contrib.auth.models import Permission

    reviewers["admin"].user_permissions.add(Permission.objects.get(codename="view_private_mapping"))


@pytest.fixture
def kit(demo_probes, tmp_path):
    compiled = compile_parent(demo.demo_source()).probes
    catalog = write_kit_draft(tmp_path / "draft", compiled)
    return {
        "root": tmp_path / "draft",
        "catalog": catalog,
        "compiled": compiled,
        "items": {i["logical_probe_id"]: i for i in catalog["probes"]},
    }


def run(document, *, actor=None, draft=None):
    return kit_decisions_import(
        document=document,
        file_bytes_sha256=bytes_digest(canonical_bytes(document)),
        actor=actor,
        draft_root=draft,
    )


def states():
    return {p.logical_probe_id: (p.state, p.packet_state, p.in_p) for p in Probe.objects.all()}


def test_golden_kit_decision_file_imports_onto_the_compiled_demo(kit, reviewers):
    items = kit["items"]
    doc = legacy_file(
        kit["catalog"],
        [
            decision(items[demo.T03_IMAGE]),
            decision(items[demo.T02], "rejected"),
            decision(items[demo.T03_TEXT], "pending"),
        ],
    )
    report = run(doc, actor=reviewers["admin"], draft=kit["root"])
    assert report.imported == sorted([demo.T02, demo.T03_IMAGE])
    assert report.pending == [demo.T03_TEXT]
    assert report.settled == {demo.T02: "rejected", demo.T03_IMAGE: "approved"}
    assert states() == {
        demo.T02: ("rejected", "rejected", False),
        demo.T03_IMAGE: ("approved", "approved_nonempty", True),
        demo.T03_TEXT: ("pending_review", "pending_review", False),
    }
    approved = KitDecision.objects.get(probe__logical_probe_id=demo.T03_IMAGE)
    probe = approved.probe
    assert (approved.kit_review_target_root, approved.review_target_root) == (
        items[demo.T03_IMAGE]["review_target_root"],
        probe.review_target_root,
    )
    assert approved.kit_review_target_root != probe.review_target_root  # the Kit's root, mapped, not ours
    assert (approved.kit_reviewer, approved.imported_by, approved.severity, approved.sequence) == (
        "Kit Reviewer A",
        reviewers["admin"],
        "none",
        None,
    )
    rejected = KitDecision.objects.get(probe__logical_probe_id=demo.T02)
    assert (rejected.status, rejected.severity) == ("rejected", "unresolved")  # legacy rejection, Kit rule
    assert not type(reviewers["admin"]).objects.filter(username="Kit Reviewer A").exists()
    assert probe.key.key["packet_plan"]["state"] == "approved_nonempty"
    verbs = list(
        Event.objects.filter(verb__startswith="review.kit").values_list("verb", flat=True).order_by("pk")
    )
    assert verbs == ["review.kit_draft_import", "review.kit_decisions_import"]
    assert Event.objects.filter(verb="probe.review_recorded").count() == 2


def test_every_demo_probe_binds_with_the_kits_roots_and_equal_pixels(kit):
    record = kit_draft_import(root=kit["root"], actor=None)
    bindings = {b.probe.logical_probe_id: b for b in KitProbeBinding.objects.filter(draft=record)}
    assert sorted(bindings) == sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT])
    assert record.summary["differing"] == {}
    assert all(b.kit_review_target_root == kit["items"][q]["review_target_root"] for q, b in bindings.items())
    assert all(b.same_bytes for b in bindings.values())
    assert record.catalog_root == digest(kit["catalog"])


def test_a_stale_decision_is_refused_and_nothing_changes(kit, reviewers):
    before = states()
    doc = legacy_file(kit["catalog"], [decision(kit["items"][demo.T03_IMAGE], review_target_root="a" * 64)])
    with pytest.raises(ApplicationError) as error:
        run(doc, actor=reviewers["admin"], draft=kit["root"])
    assert error.value.code == "REVIEW_TARGET_STALE"
    assert not KitDecision.objects.exists() and states() == before


def test_a_decision_on_a_probe_that_changed_here_since_the_draft_check_is_stale(kit):
    kit_draft_import(root=kit["root"], actor=None)
    Probe.objects.filter(logical_probe_id=demo.T03_IMAGE).update(review_target_root="b" * 64)
    with pytest.raises(ApplicationError) as error:
        run(legacy_file(kit["catalog"], [decision(kit["items"][demo.T03_IMAGE])]))
    assert error.value.code == "REVIEW_TARGET_STALE"
    assert not KitDecision.objects.exists()


def test_a_kit_probe_that_differs_from_ours_is_not_bound_and_its_decision_is_stale(demo_probes, tmp_path):
    def edit(qid, core):
        if qid == demo.T03_IMAGE:
            core["public_raw"]["messages"]["user"] += " "

    compiled = compile_parent(demo.demo_source()).probes
    catalog = write_kit_draft(tmp_path / "d", compiled, edit_core=edit)
    record = kit_draft_import(root=tmp_path / "d", actor=None)
    assert record.summary["differing"] == {demo.T03_IMAGE: ["public_raw"]}
    item = next(i for i in catalog["probes"] if i["logical_probe_id"] == demo.T03_IMAGE)
    with pytest.raises(ApplicationError) as error:
        run(legacy_file(catalog, [decision(item)]))
    assert (error.value.code, error.value.extra["differs"]) == ("REVIEW_TARGET_STALE", ["public_raw"])


def test_a_preview_whose_content_root_is_not_its_cores_digest_is_refused(demo_probes, tmp_path):
    write_kit_draft(tmp_path / "d", compile_parent(demo.demo_source()).probes, tamper_content_root=True)
    with pytest.raises(ApplicationError) as error:
        kit_draft_import(root=tmp_path / "d", actor=None)
    assert error.value.code == "KIT_PREVIEW_CONTENT_ROOT_MISMATCH"


def test_a_draft_file_changed_after_its_manifest_is_refused(kit):
    path = kit["root"] / "catalog.PRIVATE.json"
    path.write_bytes(path.read_bytes() + b" ")
    with pytest.raises(ApplicationError) as error:
        kit_draft_import(root=kit["root"], actor=None)
    assert error.value.code == "DRAFT_DESCRIPTOR_BYTES_CHANGED"


def _mutations(items):
    t03 = items[demo.T03_IMAGE]
    return {
        "REVIEW_CATALOG_STALE": lambda doc: doc.update(catalog_root="c" * 64),
        "REVIEW_FILE_FIELDS": lambda doc: doc.update(extra=1),
        "REVIEW_DECISION_FIELDS": lambda doc: doc["decisions"][0].update(severity="none"),
        "UNKNOWN_NONDEV_OR_DUPLICATE_PROBE": lambda doc: doc["decisions"].append(decision(t03)),
        "REVIEW_BOOLEAN_REQUIRED": lambda doc: doc["decisions"][0]["confirmations"].update(
            source_semantics=1
        ),
        "APPROVAL_CHECKS_REQUIRED": lambda doc: doc["decisions"][0]["confirmations"].update(
            source_semantics=False
        ),
        "BLIND_ANSWER_REQUIRED": lambda doc: doc["decisions"][0].update(blind_answer="  "),
        "REVIEWER_REQUIRED": lambda doc: doc["decisions"][0].update(reviewer=""),
        "REVIEW_STATUS_INVALID": lambda doc: doc["decisions"][0].update(status="accepted"),
        "REJECTION_NOTE_REQUIRED": lambda doc: doc["decisions"][0].update(status="rejected", note=""),
    }


@pytest.mark.parametrize(
    "code", list(_mutations({demo.T03_IMAGE: {"logical_probe_id": "", "review_target_root": ""}}))
)
def test_the_kits_file_rules_refuse_the_whole_file(kit, code):
    doc = legacy_file(
        kit["catalog"], [decision(kit["items"][demo.T03_IMAGE]), decision(kit["items"][demo.T02])]
    )
    _mutations(kit["items"])[code](doc)
    before = states()
    with pytest.raises(ApplicationError) as error:
        run(doc, draft=kit["root"])
    assert error.value.code == code
    assert not KitDecision.objects.exists() and states() == before


def test_a_non_development_probe_is_refused(demo_probes, tmp_path):
    catalog = write_kit_draft(
        tmp_path / "d", compile_parent(demo.demo_source()).probes, split="candidate_unassigned_not_release"
    )
    with pytest.raises(ApplicationError) as error:
        run(legacy_file(catalog, [decision(catalog["probes"][0])]), draft=tmp_path / "d")
    assert error.value.code == "UNKNOWN_NONDEV_OR_DUPLICATE_PROBE"


def kit_project(kit, tmp_path):
    """A Kit review project (``project.json`` + ``source/``) around the fixture's draft."""
    project = tmp_path / "project"
    shutil.copytree(kit["root"], project / "source")
    header = {
        "schema_version": "native_review_project_v1",
        "release_tools_version": "native_data_release_v1",
        "release_implementation": {},
        "source_catalog_root": digest(kit["catalog"]),
        "source_manifest_root": "3" * 64,
    }
    header["project_id"] = "NRP-" + digest(header)
    (project / "project.json").write_bytes(canonical_bytes(header))
    return project, header


def test_native_release_reviews_bind_to_the_kit_project_and_reimport_is_idempotent(kit, tmp_path):
    project, header = kit_project(kit, tmp_path)
    item = kit["items"][demo.T03_IMAGE]
    doc = {
        "schema_version": "native_release_reviews_v1",
        "catalog_root": digest(kit["catalog"]),
        "context_root": header["project_id"],
        "role": "individual",
        "decisions": [{**decision(item), "severity": "minor", "sequence": 1}],
    }
    assert run(doc, draft=project).imported == [demo.T03_IMAGE]
    assert KitDecision.objects.get().context_root == header["project_id"]
    assert run(doc).unchanged == [demo.T03_IMAGE]
    conflicting = json.loads(json.dumps(doc))
    conflicting["decisions"][0]["note"] = "other"
    with pytest.raises(ApplicationError) as error:
        run(conflicting)
    assert error.value.code == "CONFLICTING_REVIEWS_USE_ONE_ADJUDICATED_EXPORT"
    wrong = {**doc, "context_root": "NRP-" + "0" * 64}
    with pytest.raises(ApplicationError) as error:
        run(wrong)
    assert error.value.code == "REVIEW_CONTEXT_OR_ROLE_MISMATCH"
    audit = {**doc, "role": "primary"}
    with pytest.raises(ApplicationError) as error:
        run(audit)
    assert error.value.code == "REVIEW_CONTEXT_OR_ROLE_MISMATCH"


def test_only_key_holders_import(kit, reviewers, django_user_model):
    from tests.conftest import make_user

    doc = legacy_file(kit["catalog"], [decision(kit["items"][demo.T03_IMAGE])])
    plain_admin = make_user(django_user_model, "admin_without_key", "admin")
    for user in (reviewers["alice"], reviewers["carol"], plain_admin):
        with pytest.raises(ApplicationError) as error:
            run(doc, actor=user, draft=kit["root"])
        assert (error.value.code, error.value.status_code) == ("KEY_HOLDER_REQUIRED", 403)
    assert not KitDecision.objects.exists()


def test_a_file_without_an_imported_draft_is_refused(demo_probes):
    doc = {"schema_version": "physalign_decisions_v1", "catalog_root": "9" * 64, "decisions": []}
    with pytest.raises(ApplicationError) as error:
        run(doc)
    assert error.value.code == "REVIEW_CATALOG_STALE"


def test_management_command_imports_and_refuses_stale(kit, tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(legacy_file(kit["catalog"], [decision(kit["items"][demo.T03_IMAGE])])))
    call_command("import_kit_decisions", str(good), "--draft", str(kit["root"]))
    assert "imported 1" in capsys.readouterr().out
    assert Probe.objects.get(logical_probe_id=demo.T03_IMAGE).state == "approved"
    stale = tmp_path / "stale.json"
    stale.write_text(
        json.dumps(
            legacy_file(
                kit["catalog"],
                [
                    decision(
                        kit["items"][demo.T02], review_target_root="d" * 64, confirmations=dict(CONFIRMED)
                    )
                ],
            )
        )
    )
    with pytest.raises(CommandError, match="REVIEW_TARGET_STALE"):
        call_command("import_kit_decisions", str(stale))


def test_an_imported_systemic_finding_blocks_development_signoff_like_ours(kit, tmp_path):
    """A Kit file cannot bypass what blocks an in-app review: a systemic finding on the current root blocks."""
    from review.selectors import development_parents_state

    project, header = kit_project(kit, tmp_path)
    doc = {
        "schema_version": "native_release_reviews_v1",
        "catalog_root": digest(kit["catalog"]),
        "context_root": header["project_id"],
        "role": "individual",
        "decisions": [
            {**decision(kit["items"][demo.T02], "rejected"), "severity": "systemic", "sequence": 1}
        ],
    }
    assert development_parents_state()["blocking"] == []
    run(doc, draft=project)
    assert development_parents_state()["blocking"] == [demo.T02]


def test_a_kit_teams_approvals_carry_a_signed_release_that_validates(kit, reviewers, tmp_path):
    """Kit decisions are review evidence like ours: signoff, export and the Kit-rules validation accept them,
    and the release's proof names the Kit reviewer as written."""
    from probes.releases import release_validate
    from review.models import SIGNOFF_KEYS
    from review.services import signoff_create, signoff_export

    items = kit["items"]
    doc = legacy_file(kit["catalog"], [decision(items[q]) for q in (demo.T02, demo.T03_IMAGE, demo.T03_TEXT)])
    run(doc, actor=reviewers["admin"], draft=kit["root"])
    signoff = signoff_create(
        actor=reviewers["admin"],
        mode="individual",
        assessment=None,
        confirmations={k: True for k in SIGNOFF_KEYS},
        evidence_ref="Kit team review",
    )
    release = signoff_export(signoff=signoff, output=tmp_path / "release", actor=reviewers["admin"])
    assert release.counts["B"] == {"probes": 3, "mothers": 1}
    report = release_validate(tmp_path / "release")
    assert report.valid, report.errors
    proof = json.loads(
        (tmp_path / "release" / "private" / "request" / "review_proof.PRIVATE.json").read_text("utf-8")
    )
    assert {d["reviewer"] for d in proof["decisions"].values()} == {"Kit Reviewer A"}
    assert {q: d["review_target_root"] for q, d in proof["decisions"].items()} == {
        p.logical_probe_id: p.review_target_root for p in Probe.objects.all()
    }  # our roots, the ones bound


@pytest.mark.parametrize(
    ("catalog_probes", "extra", "code"),
    [
        ([1], {}, "CATALOG_SCHEMA"),
        (["PAQ-1"], {}, "CATALOG_SCHEMA"),
        ([{"logical_probe_id": "PAQ-1", "preview": "../p.json"}], {}, "DRAFT_PATH_INVALID"),
        ([{"logical_probe_id": "PAQ-1", "preview": "p.json"}], {"p.json": [1, 2]}, "PREVIEW_SCHEMA"),
        (
            [{"logical_probe_id": "PAQ-1", "preview": "p.json"}],
            {"p.json": {"core": {"private_core": {}}}},
            "KIT_PREVIEW_CONTENT_ROOT_MISMATCH",
        ),
    ],
)
def test_a_malformed_kit_draft_is_refused_with_a_code_never_a_crash(
    db, tmp_path, catalog_probes, extra, code
):
    from kit.canonical import write_json_bytes

    files = {
        "catalog.PRIVATE.json": {
            "schema_version": "physalign_draft_catalog_v1",
            "native_profile": "native_binding_draft_v1",
            "probes": catalog_probes,
        },
        **extra,
    }
    for name, value in files.items():
        (tmp_path / name).write_bytes(write_json_bytes(value))
    (tmp_path / "FILE_MANIFEST.json").write_bytes(
        write_json_bytes({name: bytes_digest((tmp_path / name).read_bytes()) for name in files})
    )
    with pytest.raises(ApplicationError) as refused:
        kit_draft_import(root=tmp_path, actor=None)
    assert refused.value.code == code
