"""The whole Kit release layout (issue 13, item 7; Kit §2.14, §7, §7.1): private/project, private/request,
private/signoff.json and private/contract_schemas are written, and the validation rebuilds everything from them.
Each tampering is refused with the Kit's code even after FILE_MANIFEST.json is re-sealed (the Kit's
tests/test_native_release.py vectors: answer injection, a private file in public/, a changed image, the public
root changed to private, a pending or stale signoff)."""

from __future__ import annotations

import copy
import json
import shutil
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kit.canonical import digest, parse_json, write_json_bytes
from physalign_site.errors import ApplicationError
from probes import release_layout as layout
from probes.models import Probe
from probes.release_layout import CONFIRMATIONS, SIGNOFF_CHECKS, ReleaseAuthorization
from probes.releases import release_export, release_validate, seal_directory
from probes.services import compile_run_create, compile_run_execute, probe_record_review
from tests.review.conftest import reviewers  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

SCHEMAS = sorted(p.name for p in layout.SCHEMA_DIR.glob("*.json"))
SIGNOFF = {
    "reviewer": "SYNTHETIC_TEAM_APPROVER",
    "evidence_ref": "SYNTHETIC_TEST_NOT_HUMAN",
    "confirmations": {k: True for k in SIGNOFF_CHECKS},
}


def _decision(probe: Probe, reviewer: str, sequence: int, **change) -> dict:
    return {
        "logical_probe_id": probe.logical_probe_id,
        "review_target_root": probe.review_target_root,
        "status": "approved",
        "reviewer": reviewer,
        "blind_answer": "SYNTHETIC independent answer",
        "confirmations": {k: True for k in CONFIRMATIONS},
        "note": "",
        "severity": "none",
        "sequence": sequence,
        **change,
    }


def individual(probes: list[Probe]) -> ReleaseAuthorization:
    primary = [_decision(p, "SYNTHETIC_A", i + 1) for i, p in enumerate(probes)]
    secondary = [_decision(p, "SYNTHETIC_B", i + 1) for i, p in enumerate(probes)]
    return ReleaseAuthorization(
        mode="individual",
        decisions={d["logical_probe_id"]: d for d in primary},
        documents={"primary": primary, "secondary": secondary},
        review_state_root="0" * 64,
        signoff=SIGNOFF,
    )


@pytest.fixture
def approved(demo_parent):
    compile_run_execute(run_id=compile_run_create(actor=None, seed=2027, enqueue=False).pk)
    for probe in Probe.objects.all():
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )
    return list(Probe.objects.order_by("logical_probe_id"))


@pytest.fixture
def signed(approved, tmp_path):
    """A signed release of the synthetic demo parent: synthetic sources are exported as a synthetic example, as
    the Kit's own tests do."""
    release = release_export(
        split="development",
        output=tmp_path / "out",
        actor=None,
        synthetic_example=True,
        authorization=individual(approved),
    )
    return release, tmp_path / "out"


def _json(path):
    return parse_json(path.read_bytes())


def _write(path, value) -> None:
    path.write_bytes(write_json_bytes(value))


def _codes(root) -> set[str]:
    return release_validate(root).codes


def _copy(root, tmp_path, name):
    target = tmp_path / name
    shutil.copytree(root, target)
    return target


def test_a_signed_release_writes_the_kit_layout_and_validates(signed, tmp_path):
    release, root = signed
    private = sorted(
        p.relative_to(root / "private").as_posix() for p in (root / "private").rglob("*") if p.is_file()
    )
    assert {
        "signoff.json",
        "request/request.json",
        "request/review_proof.PRIVATE.json",
        "request/approval.TEMPLATE.json",
        "request/FILE_MANIFEST.json",
        "project/project.json",
        "project/FILE_MANIFEST.json",
        "project/source/catalog.PRIVATE.json",
        "project/source/membership.json",
        "project/source/source_private.json",
        "project/source/FILE_MANIFEST.json",
        "membership.json",
        "pools.json",
        "mappings.json",
    } <= set(private)
    assert sorted(p.name for p in (root / "private" / "contract_schemas").iterdir()) == SCHEMAS
    assert len([p for p in private if p.startswith("project/source/probes/")]) == 3
    assert len([p for p in private if p.startswith("frozen/PAI-")]) == 3

    project = _json(root / "private/project/project.json")
    assert project["schema_version"] == "native_review_project_v1"
    assert project["project_id"] == "NRP-" + digest({k: v for k, v in project.items() if k != "project_id"})
    assert project["source_catalog_root"] == digest(
        _json(root / "private/project/source/catalog.PRIVATE.json")
    )
    request = _json(root / "private/request/request.json")
    assert (request["schema_version"], request["mode"], request["split"]) == (
        "native_release_request_v1",
        "individual",
        "development",
    )
    assert (
        request["selected_mothers"] == ["SYNTHETIC_TEST_ONLY"]
        and request["project_id"] == project["project_id"]
    )
    proof = _json(root / "private/request/review_proof.PRIVATE.json")
    assert proof["schema_version"] == "native_review_receipt_v1" and request["proof_root"] == digest(proof)
    assert proof["summary"] == {
        "approved_complete_mothers": ["SYNTHETIC_TEST_ONLY"],
        "defective_or_unresolved_mothers": {},
        "status_counts": {"approved": 3},
    }
    assert [d["role"] for d in proof["original_documents"]] == ["primary", "secondary"]
    assert all(d["context_root"] == project["project_id"] for d in proof["original_documents"])
    signoff = _json(root / "private/signoff.json")
    assert signoff == {
        "schema_version": "native_release_signoff_v1",
        "target_root": digest(request),
        "status": "approved",
        "reviewer": "SYNTHETIC_TEAM_APPROVER",
        "evidence_ref": "SYNTHETIC_TEST_NOT_HUMAN",
        "confirmations": {k: True for k in SIGNOFF_CHECKS},
    }
    template = _json(root / "private/request/approval.TEMPLATE.json")
    assert template["status"] == "pending" and template["target_root"] == digest(request)

    manifest = _json(root / "release.json")
    assert manifest["release_id"] == release.release_id
    assert (manifest["approval_mode"], manifest["signoff_root"], manifest["request_root"]) == (
        "individual",
        digest(signoff),
        digest(request),
    )
    assert manifest["artifact_mode"] == "synthetic_example_NOT_benchmark_data"
    assert manifest["counts"] == {
        "B": {"probes": 3, "mothers": 1},
        "L": {"probes": 1, "mothers": 1},
        "P": {"probes": 2, "mothers": 1},
    }
    members = _json(root / "private/membership.json")
    assert {m["human_item_review"] for m in members} == {"approved_individual"}
    for frozen in (root / "private/frozen").iterdir():
        record = _json(frozen)
        assert set(record) == {"envelope", "private", "core", "authorization"}
        assert record["envelope"]["content_root"] == digest(record["core"])
        assert record["authorization"]["signoff_root"] == digest(signoff)
        assert record["authorization"]["review_evidence"][0]["reviewer"] == "SYNTHETIC_A"
    assert release_validate(root).errors == []
    assert release_validate(_copy(root, tmp_path, "moved")).errors == []  # relocation revalidates


def test_validate_release_command_accepts_the_signed_release(signed):
    _, root = signed
    out = StringIO()
    call_command("validate_release", str(root), stdout=out)
    assert out.getvalue().strip() == "valid"


def test_public_answer_injection_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "tamper")
    rows = _json(root / "public/qa_raw.json")
    rows[0]["answer"] = "E2"
    _write(root / "public/qa_raw.json", rows)
    seal_directory(root)
    assert "PUBLIC_QA_REBUILD_MISMATCH" in _codes(root)


def test_a_changed_public_record_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "edited")
    rows = _json(root / "public/qa_gold.json")
    rows[0]["input"]["messages"]["user"] += " (hint: E1)"
    _write(root / "public/qa_gold.json", rows)
    seal_directory(root)
    assert "PUBLIC_QA_REBUILD_MISMATCH" in _codes(root)


@pytest.mark.parametrize("name", ["FILE_MANIFEST.json", "images/extra.json"])
def test_a_private_file_dropped_into_public_is_refused_even_after_resealing(signed, tmp_path, name):
    root = _copy(signed[1], tmp_path, "leak")
    _write(root / "public" / name, {"private_answer": "E2"})
    seal_directory(root)
    assert "UNDECLARED_PUBLIC_FILE_POSSIBLE_PRIVATE_LEAK" in _codes(root)


def test_a_changed_image_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "badimage")
    image = sorted((root / "public/images").iterdir())[0]
    image.write_bytes(b"SYNTHETIC CORRUPT IMAGE")
    seal_directory(root)
    assert "PUBLIC_IMAGE_BYTES_CHANGED" in _codes(root)
    image.unlink()
    seal_directory(root)
    assert "PUBLIC_IMAGE_MISSING" in _codes(root)


def test_the_public_root_changed_to_private_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "badroot")
    manifest = _json(root / "release.json")
    manifest["public_root"] = "private"
    _write(root / "release.json", manifest)
    seal_directory(root)
    assert "RELEASE_MANIFEST_REBUILD_MISMATCH" in _codes(root)


def test_a_missing_pending_or_stale_signoff_is_refused(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "nosignoff")
    (root / "private/signoff.json").unlink()
    seal_directory(root)
    assert _codes(root) == {"EXPLICIT_SIGNOFF_REQUIRED"}
    shutil.copy(root / "private/request/approval.TEMPLATE.json", root / "private/signoff.json")
    seal_directory(root)
    assert _codes(root) == {"EXPLICIT_SIGNOFF_REQUIRED"}
    stale = {**_json(signed[1] / "private/signoff.json"), "target_root": "0" * 64}
    _write(root / "private/signoff.json", stale)
    seal_directory(root)
    assert _codes(root) == {"SIGNOFF_WRONG_VERSION_OR_TARGET"}
    unchecked = _json(signed[1] / "private/signoff.json")
    unchecked["confirmations"]["data_use_authorized"] = False
    _write(root / "private/signoff.json", unchecked)
    seal_directory(root)
    assert _codes(root) == {"SIGNOFF_CONFIRMATIONS"}


def test_a_tampered_request_is_refused_even_after_resealing_every_manifest(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "badrequest")
    request = _json(root / "private/request/request.json")
    request["coverage_limit"] = "finite_population_batch_audit"
    _write(root / "private/request/request.json", request)
    seal_directory(root / "private/request")
    seal_directory(root)
    assert "RELEASE_REQUEST_RECOMPUTATION_FAILED" in _codes(root)


def test_a_tampered_review_proof_is_refused_even_when_its_id_is_recomputed(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "badproof")
    proof_path = root / "private/request/review_proof.PRIVATE.json"
    proof = _json(proof_path)
    qid = sorted(proof["decisions"])[0]
    proof["decisions"][qid]["reviewer"] = "SOMEONE_ELSE"
    _write(proof_path, proof)
    seal_directory(root / "private/request")
    seal_directory(root)
    assert _codes(root) == {"RECEIPT_CHANGED"}
    proof["receipt_id"] = "NRI-" + digest({k: v for k, v in proof.items() if k != "receipt_id"})
    _write(proof_path, proof)
    seal_directory(root / "private/request")
    seal_directory(root)
    assert _codes(root) == {"FINAL_DECISION_WITHOUT_EVIDENCE"}  # the final decision is not one of the reviews


def test_a_tampered_draft_in_the_project_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "baddraft")
    draft_path = sorted((root / "private/project/source/probes").iterdir())[0]
    draft = _json(draft_path)
    draft["raw_messages"]["user"] += " E2"
    _write(draft_path, draft)
    seal_directory(root / "private/project/source")
    seal_directory(root / "private/project")
    seal_directory(root)
    assert _codes(root) == {"PROJECT_SOURCE_BYTES_CHANGED"}


def test_a_changed_frozen_record_or_schema_is_refused_even_after_resealing(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "badfrozen")
    frozen_path = sorted((root / "private/frozen").iterdir())[0]
    frozen = _json(frozen_path)
    frozen["authorization"]["human_item_review"] = "approved_sampled"
    _write(frozen_path, frozen)
    schema = root / "private/contract_schemas" / SCHEMAS[0]
    _write(schema, {**_json(schema), "title": "changed"})
    seal_directory(root)
    assert _codes(root) == {"FROZEN_REBUILD_MISMATCH", "SCHEMA_BUNDLE_CHANGED"}


def test_an_unsealed_change_is_refused(signed, tmp_path):
    root = _copy(signed[1], tmp_path, "unsealed")
    (root / "README.md").write_text("changed")
    assert _codes(root) == {"FILE_MANIFEST_MISMATCH", "README_REBUILD_MISMATCH"}


def test_synthetic_sources_are_not_exported_as_a_reviewed_release(approved, tmp_path):
    with pytest.raises(ApplicationError) as error:
        release_export(
            split="development", output=tmp_path / "real", actor=None, authorization=individual(approved)
        )
    assert error.value.code == "SYNTHETIC_DATA_CANNOT_BE_BENCHMARK_RELEASE"
    assert not (tmp_path / "real").exists() and not (tmp_path / ".real.staging").exists()


def test_a_stale_review_root_or_an_incomplete_proof_is_refused_at_export(approved, tmp_path):
    stale = individual(approved)
    qid = approved[0].logical_probe_id
    stale.decisions[qid]["review_target_root"] = "0" * 64
    with pytest.raises(ApplicationError) as error:
        release_export(
            split="development",
            output=tmp_path / "a",
            actor=None,
            synthetic_example=True,
            authorization=stale,
        )
    assert error.value.code == "REVIEW_TARGET_STALE"
    partial = individual(approved)
    del partial.decisions[qid]
    partial.documents["primary"].pop(0)
    with pytest.raises(ApplicationError) as error:
        release_export(
            split="development",
            output=tmp_path / "b",
            actor=None,
            synthetic_example=True,
            authorization=partial,
        )
    assert error.value.code == "NO_COMPLETE_APPROVED_MOTHERS_IN_REQUESTED_SPLIT"


def test_unsigned_exports_use_the_layout_and_never_validate(approved, tmp_path):
    release_export(split="development", output=tmp_path / "override", actor=None)
    assert (tmp_path / "override/private/request/request.json").is_file()
    assert not (tmp_path / "override/private/signoff.json").exists()
    assert _json(tmp_path / "override/private/request/request.json")["mode"] == "admin_override"
    assert _codes(tmp_path / "override") == {
        "EXPLICIT_SIGNOFF_REQUIRED",
        "SYNTHETIC_DATA_CANNOT_BE_BENCHMARK_RELEASE",
    }
    assert "NO REVIEW SIGNOFF" in (tmp_path / "override/README.md").read_text()
    release_export(split="development", output=tmp_path / "example", actor=None, synthetic_example=True)
    assert _codes(tmp_path / "example") == {"EXPLICIT_SIGNOFF_REQUIRED"}
    with pytest.raises(CommandError, match="EXPLICIT_SIGNOFF_REQUIRED"):
        call_command("validate_release", str(tmp_path / "example"), stdout=StringIO(), stderr=StringIO())


# The Kit's decision and signoff rules, one by one (native_release_support normalize_reviews, check_signoff) -------
ROOTS = {"PAQ-1": "a" * 64}


def _kit_decision(**change) -> dict:
    return {
        "logical_probe_id": "PAQ-1",
        "review_target_root": "a" * 64,
        "status": "approved",
        "reviewer": "R",
        "blind_answer": "B",
        "confirmations": {k: True for k in CONFIRMATIONS},
        "note": "",
        "severity": "none",
        "sequence": 1,
        **change,
    }


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"review_target_root": "b" * 64}, "REVIEW_TARGET_STALE"),
        ({"logical_probe_id": "PAQ-2"}, "UNKNOWN_OR_DUPLICATE_REVIEW"),
        ({"status": "done"}, "REVIEW_STATUS_INVALID"),
        ({"severity": "serious"}, "APPROVAL_CHECKS_REQUIRED"),
        (
            {"confirmations": {**{k: True for k in CONFIRMATIONS}, "complete_targets": False}},
            "APPROVAL_CHECKS_REQUIRED",
        ),
        (
            {"confirmations": {**{k: True for k in CONFIRMATIONS}, "complete_targets": 1}},
            "REVIEW_BOOLEAN_REQUIRED",
        ),
        ({"status": "rejected", "severity": "minor", "note": "x"}, "REJECTION_NEEDS_DEFECT_CLASS"),
        ({"status": "rejected", "severity": "serious", "note": " "}, "REJECTION_NOTE_REQUIRED"),
        ({"blind_answer": ""}, "BLIND_ANSWER_REQUIRED"),
        ({"reviewer": " "}, "REVIEWER_REQUIRED"),
        ({"sequence": 0}, "REVIEW_SEQUENCE_INVALID"),
        ({"severity": "fatal"}, "REVIEW_SEVERITY_INVALID"),
    ],
)
def test_each_kit_decision_rule(change, code):
    with pytest.raises(layout.ReleaseError) as error:
        layout.normalize_decision(_kit_decision(**change), ROOTS, role="primary")
    assert error.value.code == code
    assert (
        layout.normalize_decision(_kit_decision(sequence=None), ROOTS, role="individual")["sequence"] is None
    )
    with pytest.raises(layout.ReleaseError, match="REVIEW_SEQUENCE_REQUIRED"):
        layout.normalize_decision(_kit_decision(sequence=None), ROOTS, role="primary")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"status": "pending"}, "EXPLICIT_SIGNOFF_REQUIRED"),
        ({"target_root": "0" * 64}, "SIGNOFF_WRONG_VERSION_OR_TARGET"),
        ({"schema_version": "native_release_signoff_v0"}, "SIGNOFF_WRONG_VERSION_OR_TARGET"),
        ({"reviewer": ""}, "SIGNOFF_REVIEWER_REQUIRED"),
        ({"evidence_ref": " "}, "SIGNOFF_EVIDENCE_REQUIRED"),
        ({"confirmations": {k: True for k in SIGNOFF_CHECKS[:5]}}, "SIGNOFF_CONFIRMATIONS"),
        ({"extra": 1}, "SIGNOFF_FIELDS"),
    ],
)
def test_each_kit_signoff_rule(change, code):
    request = {"schema_version": "native_release_request_v1"}
    good = layout.signoff_record(request, SIGNOFF)
    layout.check_signoff(good, digest(request))
    with pytest.raises(layout.ReleaseError) as error:
        layout.check_signoff({**copy.deepcopy(good), **change}, digest(request))
    assert error.value.code == code


def test_review_summary_follows_the_kit():
    catalog = {
        "probes": [
            {"problem_id": "M1", "logical_probe_id": "Q1"},
            {"problem_id": "M1", "logical_probe_id": "Q2"},
            {"problem_id": "M2", "logical_probe_id": "Q3"},
        ]
    }
    decisions = {
        "Q1": {"status": "approved"},
        "Q2": {"status": "rejected", "severity": "serious"},
        "Q3": {"status": "approved"},
    }
    assert layout.review_summary(catalog, decisions) == {
        "approved_complete_mothers": ["M2"],
        "defective_or_unresolved_mothers": {"M1": ["serious"]},
        "status_counts": {"approved": 2, "rejected": 1},
    }


def test_our_confirmation_lists_are_the_review_apps():
    from review.models import CONFIRMATION_KEYS, SIGNOFF_KEYS

    assert CONFIRMATIONS == CONFIRMATION_KEYS and SIGNOFF_CHECKS == SIGNOFF_KEYS


def test_our_contract_schemas_describe_the_records_we_write(signed):
    _, root = signed
    for record in _json(root / "public/qa_raw.json") + _json(root / "public/qa_gold.json"):
        assert layout._schema_errors("public_qa_record.schema.json", record) == []
    bad = {**_json(root / "public/qa_raw.json")[0], "answer": "E2"}
    assert layout._schema_errors("public_qa_record.schema.json", bad)
    proof = _json(root / "private/request/review_proof.PRIVATE.json")
    for decision in proof["decisions"].values():
        assert layout._schema_errors("review_decision.schema.json", decision) == []
    assert json.dumps(layout.schema_bundle())  # plain JSON, written to private/contract_schemas


# Through the review app: blind-first reviews, a signoff, its authorization, the export, the validation ------------
def test_a_review_signoff_becomes_a_release_that_validates(reviewers, tmp_path):  # noqa: F811
    from review import services
    from review.models import SIGNOFF_KEYS, Role
    from review.release_proof import release_authorization
    from tests.probes.conftest import make_demo_parent
    from tests.review.test_flow import review_all

    make_demo_parent(type(reviewers["admin"]))
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    for role, user in ((Role.PRIMARY, reviewers["alice"]), (Role.SECONDARY, reviewers["bob"])):
        review_all(services.review_claim(reviewer=user, role=role, context="development"), user)
    signoff = services.signoff_create(
        actor=reviewers["admin"],
        mode="individual",
        assessment=None,
        confirmations={k: True for k in SIGNOFF_KEYS},
        evidence_ref="development review",
    )
    authorization = release_authorization(signoff)
    assert sorted(authorization.documents) == ["primary", "secondary"]
    assert {d["reviewer"] for d in authorization.decisions.values()} == {"alice"}
    release = release_export(
        split=signoff.split,
        output=tmp_path / "rel",
        actor=reviewers["admin"],
        problem_ids=signoff.problem_ids,
        synthetic_example=True,
        authorization=authorization,
    )
    root = tmp_path / "rel"
    assert release.manifest["approval_mode"] == "individual"
    assert release_validate(root).errors == []
    proof = _json(root / "private/request/review_proof.PRIVATE.json")
    assert proof["review_state_root"] == signoff.target_root
    assert {d["reviewer"] for doc in proof["original_documents"] for d in doc["decisions"]} == {
        "alice",
        "bob",
    }
    assert all(d["blind_answer"] for d in proof["decisions"].values())
    assert _json(root / "private/signoff.json")["reviewer"] == reviewers["admin"].get_username()


def test_an_accepted_audit_signoff_becomes_a_batch_release_that_validates(reviewers, tmp_path):  # noqa: F811
    from review import services
    from review.models import SIGNOFF_KEYS, Role
    from review.release_proof import release_authorization
    from tests.probes.conftest import make_demo_parent
    from tests.review.conftest import DEV, A, B, set_splits
    from tests.review.test_audit_services import approve_development, review_context

    for index, pid in enumerate((DEV, A, B)):  # distinct parents: exact duplicates are never released
        make_demo_parent(
            type(reviewers["admin"]), problem_id=pid, sample=f"S{index}", stem_suffix=f" Case {pid}."
        )
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    set_splits()
    approve_development(reviewers)
    admin = reviewers["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin, nonce="5a" * 32), actor=admin
    )
    review_context(plan, reviewers["alice"], Role.PRIMARY)
    review_context(plan, reviewers["dave"], Role.SECONDARY)
    assessment = services.audit_assess(plan=plan, actor=admin)
    assert assessment.accepted
    signoff = services.signoff_create(
        actor=admin,
        mode="audit",
        assessment=assessment,
        confirmations={k: True for k in SIGNOFF_KEYS},
        evidence_ref="audit",
    )
    release_export(
        split="test",
        output=tmp_path / "rel",
        actor=admin,
        problem_ids=signoff.problem_ids,
        synthetic_example=True,
        authorization=release_authorization(signoff),
    )
    root = tmp_path / "rel"
    assert release_validate(root).errors == []
    request = _json(root / "private/request/request.json")
    assert (request["mode"], request["split"], request["selected_mothers"]) == ("batch", "test", [A, B])
    assert request["coverage_limit"] == "finite_population_batch_audit"
    proof = _json(root / "private/request/review_proof.PRIVATE.json")
    assert (
        proof["schema_version"] == "native_audit_assessment_v1" and proof["plan"]["audit_id"] == plan.context
    )
    assert {m["human_item_review"] for m in _json(root / "private/membership.json")} == {"approved_sampled"}
