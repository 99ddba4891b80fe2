"""The Kit's release layout and its validation (Kit §2.14, §7, §7.1). Pure: no Django import.

A release directory is rebuilt, at validation, from its private part alone::

    private/project/   project.json (native_review_project_v1) + source/ (catalog, membership, one draft per
                       probe, the image bytes, the source strings the leakage scan needs), each sealed
    private/request/   request.json (native_release_request_v1), review_proof.PRIVATE.json, approval.TEMPLATE.json
    private/signoff.json               native_release_signoff_v1 over digest(request)
    private/contract_schemas/*.json    our JSON schemas of the records below (probes/release_schemas/)

From these the validation recomputes the request, every frozen record, the membership, the pools, the mappings,
the public QA files (byte for byte), the declared images (by hash) and release.json, and it refuses any public
file that is not one of those. Nothing here trusts FILE_MANIFEST.json alone: a re-sealed tampering is still
refused by the rebuild (the Kit's tests, restated in tests/probes/test_release_kit_layout.py).

Differences from the Kit, on purpose:
- the draft of a probe is our compiled probe (messages, views, key, assets), not a Kit draft directory, so its
  ``review_target_root`` is bound by the project chain, not recomputed from Pass documents;
- our review has primary, secondary and adjudicator roles in development too; the proof carries each role's
  decisions as evidence and the final decision per probe (the adjudicator's, else the primary's);
- two unsigned modes exist for the admin override and synthetic examples (``admin_override``,
  ``synthetic_example``); they carry no signoff and so never validate as a release;
- errors are collected (a list of ``{code, detail}``) instead of stopping at the first one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import ahocorasick

from kit import review as kit_review
from kit.canonical import bytes_digest, digest, parse_json, write_json_bytes
from kit.review import CONFIRMATIONS, SEVERITIES, SIGNOFF_CHECKS

RELEASE_VERSION = "native_data_release_v1"
PROJECT_VERSION = "native_review_project_v1"
REQUEST_VERSION = "native_release_request_v1"
SIGNOFF_VERSION = "native_release_signoff_v1"
RECEIPT_VERSION = "native_review_receipt_v1"
ASSESSMENT_VERSION = "native_audit_assessment_v1"
REVIEWS_VERSION = "native_release_reviews_v1"
UNSIGNED_PROOF_VERSION = "studio_unsigned_release_proof_v1"
CATALOG_VERSION = "studio_review_catalog_v1"
DRAFT_VERSION = "studio_probe_draft_v1"
PUBLIC_SCHEMA = "physalign_public_qa_v1"
ENVELOPE_VERSION = "physalign_envelope_v2_1"
AUTHORIZATION_VERSION = "native_authorization_v1"
NATIVE_PROFILE = "native_binding_draft_v1"
SYNTHETIC = "synthetic_example_NOT_benchmark_data"
REVIEWED = "reviewed_data_release"

# The Kit's six release confirmations and six item confirmations (review.models holds the labels; a test keeps
# the two lists equal).
BLOCKING = ("systemic", "information", "unresolved")
SIGNED_MODES = ("individual", "batch")
UNSIGNED_MODES = ("synthetic_example", "admin_override")
REVIEW_ROLES = ("individual", "primary", "secondary", "adjudication")
FINAL_ROLES = (
    "adjudication",
    "primary",
    "individual",
)  # the final decision of a probe: the first role present
DECISION_FIELDS = (
    *kit_review.DECISION_BASE_FIELDS,
    "severity",
    "sequence",
)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif")
SCHEMA_DIR = Path(__file__).resolve().parent / "release_schemas"
PUBLIC_FILES = ("qa_raw.json", "qa_gold.json")


class ReleaseError(ValueError):
    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code, self.detail = code, detail


def require(condition: Any, code: str, detail: str = "") -> None:
    if not condition:
        raise ReleaseError(code, detail)


def _exact(value: Any, fields: Iterable[str], code: str, detail: str = "") -> None:
    require(isinstance(value, dict) and set(value) == set(fields), code, detail)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


# Versions ------------------------------------------------------------------------------------------------------
def implementation_hashes() -> dict[str, str]:
    """What the release rules are made of: this module and our contract schemas (a changed rule is a new version)."""
    files = [
        Path(__file__).resolve(),
        Path(kit_review.__file__).resolve(),
        *sorted(SCHEMA_DIR.glob("*.json")),
    ]
    return {p.name: bytes_digest(p.read_bytes()) for p in files}


def schema_bundle() -> dict[str, Any]:
    return {p.name: parse_json(p.read_bytes()) for p in sorted(SCHEMA_DIR.glob("*.json"))}


@functools.cache
def _validator(schema_name: str) -> Any:
    """One contract schema's validator, built once a process (the schemas are files of the code)."""
    import jsonschema

    return jsonschema.Draft202012Validator(parse_json((SCHEMA_DIR / schema_name).read_bytes()))


def _schema_errors(schema_name: str, value: Any) -> list[str]:
    validator = _validator(schema_name)
    return [
        f"{schema_name}: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in validator.iter_errors(value)
    ]


# Trees of files -------------------------------------------------------------------------------------------------
Tree = dict[str, bytes]


def tree_manifest(tree: Tree) -> dict[str, str]:
    return {path: bytes_digest(data) for path, data in sorted(tree.items()) if path != "FILE_MANIFEST.json"}


def seal_tree(tree: Tree) -> Tree:
    return {**tree, "FILE_MANIFEST.json": write_json_bytes(tree_manifest(tree))}


def directory_manifest(root: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file but the directory's own FILE_MANIFEST.json (Kit §2.0)."""
    base = str(root)
    files: list[str] = []
    for folder, _dirs, names in os.walk(
        base
    ):  # os.walk: Path.relative_to per file dominated a release export
        prefix = os.path.relpath(folder, base).replace(os.sep, "/")
        for name in names:
            if os.path.isfile(os.path.join(folder, name)):
                files.append(name if prefix == "." else f"{prefix}/{name}")
    files.sort(key=lambda rel: rel.split("/"))  # the order of sorted(root.rglob("*")): by path parts
    manifest: dict[str, str] = {}
    for rel in files:
        if rel != "FILE_MANIFEST.json":
            with open(os.path.join(base, rel), "rb") as handle:
                manifest[rel] = hashlib.sha256(handle.read()).hexdigest()
    return manifest


def read_tree(root: Path) -> Tree:
    """A sealed directory, read back; refused when its FILE_MANIFEST.json does not describe its files."""
    require(root.is_dir(), "RELEASE_FILES_MISSING_OR_INVALID", f"{root.name}/ is missing")
    for path in root.rglob("*"):
        require(not path.is_symlink(), "REPARSE_POINT_NOT_ALLOWED", path.name)
    sealed = _load(root / "FILE_MANIFEST.json")
    require(sealed == directory_manifest(root), "FILE_MANIFEST_MISMATCH", root.name)
    return {rel: (root / rel).read_bytes() for rel in sealed} | {
        "FILE_MANIFEST.json": (root / "FILE_MANIFEST.json").read_bytes()
    }


def _load(path: Path) -> Any:
    try:
        return parse_json(path.read_bytes())
    except (OSError, ValueError) as error:
        raise ReleaseError("RELEASE_FILES_MISSING_OR_INVALID", f"{path.name}: {error}") from error


def _json(tree: Tree, path: str) -> Any:
    require(path in tree, "RELEASE_FILES_MISSING_OR_INVALID", f"{path} is missing")
    try:
        return parse_json(tree[path])
    except ValueError as error:
        raise ReleaseError("RELEASE_FILES_MISSING_OR_INVALID", f"{path}: {error}") from error


# The review project ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectProbe:
    """One compiled probe as the project stores it: its catalog row and its draft (assets by id)."""

    item: dict[str, Any]  # logical_probe_id, problem_id, group_id, content_group_hint, task_id, language,
    #                       review_target_root, metadata{interface, source_namespace, source_is_synthetic, ...}
    draft: dict[str, Any]  # key, raw_view, gold_view, raw_messages, gold_messages, attachment_ids, displays
    assets: dict[str, tuple[str, bytes, int, int]]  # asset_id -> (suffix, bytes, width, height)


def build_project(
    probes: list[ProjectProbe],
    membership: dict[str, Any],
    source_private: dict[str, Any],
    source_implementation: dict[str, str],
) -> tuple[Tree, dict[str, Any], dict[str, Any]]:
    """(files of private/project, project.json, the catalog). Images are stored once, named by their hash."""
    source: Tree = {}
    items = []
    for probe in sorted(probes, key=lambda p: p.item["logical_probe_id"]):
        qid = probe.item["logical_probe_id"]
        assets = {}
        for asset_id, (suffix, data, width, height) in sorted(probe.assets.items()):
            require(suffix in IMAGE_SUFFIXES, "UNSUPPORTED_PUBLIC_IMAGE_EXTENSION", f"{asset_id}{suffix}")
            sha = bytes_digest(data)
            source[f"assets/{sha}{suffix}"] = data
            assets[asset_id] = {
                "relative_path": f"{sha}{suffix}",
                "bytes_sha256": sha,
                "width": width,
                "height": height,
            }
        draft = {
            "schema_version": DRAFT_VERSION,
            "logical_probe_id": qid,
            **probe.draft,
            "assets": assets,
            "review_target_root": probe.item["review_target_root"],
        }
        source[f"probes/{qid}.json"] = write_json_bytes(draft)
        items.append({**probe.item, "draft": f"probes/{qid}.json", "asset_root": "assets"})
    membership = {**membership, "membership_root": digest(membership)}
    catalog = {
        "schema_version": CATALOG_VERSION,
        "native_profile": NATIVE_PROFILE,
        "implementation_hashes": source_implementation,
        "membership_root": membership["membership_root"],
        "probes": items,
    }
    source["catalog.PRIVATE.json"] = write_json_bytes(catalog)
    source["membership.json"] = write_json_bytes(membership)
    source["source_private.json"] = write_json_bytes(source_private)
    source = seal_tree(source)
    project = {
        "schema_version": PROJECT_VERSION,
        "release_tools_version": RELEASE_VERSION,
        "release_implementation": implementation_hashes(),
        "source_catalog_root": digest(catalog),
        "source_manifest_root": digest(parse_json(source["FILE_MANIFEST.json"])),
    }
    project["project_id"] = "NRP-" + digest(project)
    tree = {f"source/{k}": v for k, v in source.items()} | {"project.json": write_json_bytes(project)}
    return seal_tree(tree), project, catalog


@dataclass(frozen=True)
class LoadedProject:
    project: dict[str, Any]
    catalog: dict[str, Any]
    membership: dict[str, Any]
    drafts: dict[str, dict[str, Any]]
    source: Tree
    source_private: dict[str, Any]

    def asset_bytes(self, draft: dict[str, Any], asset_id: str) -> bytes:
        return self.source[f"assets/{draft['assets'][asset_id]['relative_path']}"]


def load_project(root: Path) -> LoadedProject:
    """Kit ``load_project``: every binding of project.json to its source, checked."""
    tree = read_tree(root)
    source = read_tree(root / "source")
    project = _json(tree, "project.json")
    require(isinstance(project, dict) and project.get("schema_version") == PROJECT_VERSION, "PROJECT_SCHEMA")
    require(
        project.get("project_id") == "NRP-" + digest({k: v for k, v in project.items() if k != "project_id"}),
        "PROJECT_ROOT_CHANGED",
    )
    require(project.get("release_implementation") == implementation_hashes(), "RELEASE_TOOLS_VERSION_CHANGED")
    catalog = _json(source, "catalog.PRIVATE.json")
    require(project["source_catalog_root"] == digest(catalog), "PROJECT_SOURCE_CATALOG_CHANGED")
    require(
        project["source_manifest_root"] == digest(_json(source, "FILE_MANIFEST.json")),
        "PROJECT_SOURCE_BYTES_CHANGED",
    )
    require(catalog.get("native_profile") == NATIVE_PROFILE, "NATIVE_SOURCE_REQUIRED")
    membership = _json(source, "membership.json")
    require(
        catalog.get("membership_root")
        == membership.get("membership_root")
        == digest({k: v for k, v in membership.items() if k != "membership_root"}),
        "SOURCE_MEMBERSHIP_CHANGED",
    )
    drafts = {}
    for item in catalog["probes"]:
        draft = _json(source, item["draft"])
        require(
            draft.get("logical_probe_id") == item["logical_probe_id"]
            and draft.get("review_target_root") == item["review_target_root"],
            "DRAFT_DESCRIPTOR_MISMATCH",
            item["logical_probe_id"],
        )
        for asset_id, asset in draft["assets"].items():
            data = source.get(f"assets/{asset['relative_path']}")
            require(
                data is not None and bytes_digest(data) == asset["bytes_sha256"],
                "PUBLIC_IMAGE_SOURCE_CHANGED",
                asset_id,
            )
        drafts[item["logical_probe_id"]] = draft
    return LoadedProject(project, catalog, membership, drafts, source, _json(source, "source_private.json"))


def mother_groups(catalog: dict[str, Any]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for item in catalog["probes"]:
        groups.setdefault(item["problem_id"], []).append(item["logical_probe_id"])
    return {pid: sorted(ids) for pid, ids in sorted(groups.items())}


# Review proof -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReleaseAuthorization:
    """What the review app hands to the export: the signed mode, the review evidence and the signoff.

    ``decisions`` is the final decision per probe (Kit decision shape, :data:`DECISION_FIELDS`); ``documents``
    holds each role's decisions as evidence (``primary``, ``secondary``, ``adjudication``). For ``batch`` the
    audit ``plan`` (audit_id, sample/secondary/risk/candidate mothers, blind_first, round_number) and ``result``
    (accepted, blockers, retained_mothers, ...) come along. ``signoff`` = {reviewer, evidence_ref, confirmations}."""

    mode: str
    decisions: dict[str, dict[str, Any]]
    documents: dict[str, list[dict[str, Any]]]
    review_state_root: str
    signoff: dict[str, Any]
    plan: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


def _document(
    catalog: dict[str, Any], context_root: str, role: str, decisions: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "schema_version": REVIEWS_VERSION,
        "catalog_root": digest(catalog),
        "context_root": context_root,
        "role": role,
        "decisions": sorted(decisions, key=lambda d: d["logical_probe_id"]),
    }


def build_proof(
    mode: str,
    project: dict[str, Any],
    catalog: dict[str, Any],
    *,
    authorization: ReleaseAuthorization | None,
    selected: list[str],
    exported_by: str,
) -> dict[str, Any]:
    """The review proof of a request: a receipt (individual), an assessment (batch), or an unsigned statement."""
    if mode in UNSIGNED_MODES:
        require(authorization is None, "CHOOSE_SIGNED_OR_UNSIGNED_EXPORT")
        proof = {
            "schema_version": UNSIGNED_PROOF_VERSION,
            "project_id": project["project_id"],
            "mode": mode,
            "catalog_root": digest(catalog),
            "selected_mothers": sorted(selected),
            "exported_by": exported_by,
            "statement": "no review signoff: not a reviewed release",
        }
        proof["proof_id"] = "NUP-" + digest(proof)
        return proof
    if authorization is None or authorization.mode != mode:
        raise ReleaseError("RELEASE_AUTHORIZATION_REQUIRED", "")
    context = (
        project["project_id"]
        if mode == "individual"
        else cast(dict[str, Any], authorization.plan)["audit_id"]
    )  # a batch authorization has a plan
    in_catalog = {item["logical_probe_id"] for item in catalog["probes"]}
    documents = [
        _document(
            catalog,
            context,
            role,
            [d for d in authorization.documents[role] if d["logical_probe_id"] in in_catalog],
        )
        for role in REVIEW_ROLES
        if authorization.documents.get(role)
    ]
    decisions = {
        qid: authorization.decisions[qid] for qid in sorted(authorization.decisions) if qid in in_catalog
    }
    if mode == "individual":
        proof = {
            "schema_version": RECEIPT_VERSION,
            "project_id": project["project_id"],
            "original_documents": documents,
            "decisions": decisions,
            "summary": review_summary(catalog, decisions),
            "review_state_root": authorization.review_state_root,
        }
        proof["receipt_id"] = "NRI-" + digest(proof)
        return proof
    proof = {
        "schema_version": ASSESSMENT_VERSION,
        "project_id": project["project_id"],
        "catalog_root": digest(catalog),
        "plan": authorization.plan,
        "original_documents": documents,
        "decisions": decisions,
        "summary": review_summary(catalog, decisions),
        "result": authorization.result,
        "review_state_root": authorization.review_state_root,
    }
    proof["assessment_id"] = "NAA-" + digest(proof)
    return proof


def normalize_decision(decision: Any, catalog_roots: dict[str, str], *, role: str) -> dict[str, Any]:
    """Kit ``normalize_reviews``, for one decision: fields, freshness, status, severity, confirmations."""
    _exact(decision, DECISION_FIELDS, "REVIEW_DECISION_FIELDS")
    qid = decision["logical_probe_id"]
    require(qid in catalog_roots, "UNKNOWN_OR_DUPLICATE_REVIEW", str(qid))
    require(decision["review_target_root"] == catalog_roots[qid], "REVIEW_TARGET_STALE", qid)
    require(decision["status"] in ("pending", "approved", "rejected"), "REVIEW_STATUS_INVALID", qid)
    require(
        all(isinstance(decision[k], str) for k in ("reviewer", "blind_answer", "note")),
        "REVIEW_TEXT_REQUIRED",
        qid,
    )
    _exact(decision["confirmations"], CONFIRMATIONS, "REVIEW_CONFIRMATIONS_FIELDS", qid)
    require(all(type(v) is bool for v in decision["confirmations"].values()), "REVIEW_BOOLEAN_REQUIRED", qid)
    require(decision["severity"] in SEVERITIES, "REVIEW_SEVERITY_INVALID", qid)
    sequence = decision["sequence"]
    require(sequence is None or (type(sequence) is int and sequence > 0), "REVIEW_SEQUENCE_INVALID", qid)
    if decision["status"] != "pending":
        require(_text(decision["reviewer"]), "REVIEWER_REQUIRED", qid)
        require(_text(decision["blind_answer"]), "BLIND_ANSWER_REQUIRED", qid)
        require(role == "individual" or sequence is not None, "REVIEW_SEQUENCE_REQUIRED", qid)
    if decision["status"] == "approved":
        require(
            decision["severity"] in ("none", "minor") and all(decision["confirmations"].values()),
            "APPROVAL_CHECKS_REQUIRED",
            qid,
        )
    elif decision["status"] == "rejected":
        require(decision["severity"] not in ("none", "minor"), "REJECTION_NEEDS_DEFECT_CLASS", qid)
        require(_text(decision["note"]), "REJECTION_NOTE_REQUIRED", qid)
    return cast(dict[str, Any], decision)  # _exact above refused anything but a dict


def review_summary(catalog: dict[str, Any], decisions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Kit ``review_summary``: parents whose every probe is approved, severities of rejections, status counts."""
    groups = mother_groups(catalog)
    complete = [
        pid
        for pid, ids in groups.items()
        if all(decisions.get(q, {}).get("status") == "approved" for q in ids)
    ]
    defects = {
        pid: sorted(
            {decisions[q]["severity"] for q in ids if decisions.get(q, {}).get("status") == "rejected"}
        )
        for pid, ids in groups.items()
    }
    counts = Counter(
        decisions.get(item["logical_probe_id"], {}).get("status", "pending") for item in catalog["probes"]
    )
    return {
        "approved_complete_mothers": complete,
        "defective_or_unresolved_mothers": {pid: v for pid, v in defects.items() if v},
        "status_counts": dict(sorted(counts.items())),
    }


def check_proof(proof: Any, mode: str, project: dict[str, Any], catalog: dict[str, Any]) -> set[str]:
    """Recompute what a proof establishes; returns the parents it admits (before the split rule)."""
    require(
        isinstance(proof, dict) and proof.get("project_id") == project["project_id"], "RECEIPT_PROJECT_STALE"
    )
    roots = {item["logical_probe_id"]: item["review_target_root"] for item in catalog["probes"]}
    if mode in UNSIGNED_MODES:
        require(
            proof.get("schema_version") == UNSIGNED_PROOF_VERSION and proof.get("mode") == mode,
            "PROOF_MODE_MISMATCH",
        )
        require(
            proof["proof_id"] == "NUP-" + digest({k: v for k, v in proof.items() if k != "proof_id"}),
            "PROOF_CHANGED",
        )
        require(proof["catalog_root"] == digest(catalog), "REVIEW_CATALOG_STALE")
        return set(proof["selected_mothers"])
    version, id_key, prefix = (
        (RECEIPT_VERSION, "receipt_id", "NRI-")
        if mode == "individual"
        else (ASSESSMENT_VERSION, "assessment_id", "NAA-")
    )
    require(proof.get("schema_version") == version, "PROOF_MODE_MISMATCH", mode)
    require(
        proof.get(id_key) == prefix + digest({k: v for k, v in proof.items() if k != id_key}),
        "RECEIPT_CHANGED" if mode == "individual" else "AUDIT_ASSESSMENT_CHANGED",
    )
    context = project["project_id"] if mode == "individual" else proof["plan"]["audit_id"]
    evidence: dict[str, dict[str, dict[str, Any]]] = {}
    for document in proof["original_documents"]:
        _exact(
            document,
            ("schema_version", "catalog_root", "context_root", "role", "decisions"),
            "REVIEW_FILE_FIELDS",
        )
        require(
            document["schema_version"] == REVIEWS_VERSION
            and document["context_root"] == context
            and document["role"] in REVIEW_ROLES,
            "REVIEW_CONTEXT_OR_ROLE_MISMATCH",
        )
        require(document["catalog_root"] == digest(catalog), "REVIEW_CATALOG_STALE")
        found = evidence.setdefault(document["role"], {})
        for decision in document["decisions"]:
            normalize_decision(decision, roots, role=document["role"])
            require(
                decision["logical_probe_id"] not in found,
                "UNKNOWN_OR_DUPLICATE_REVIEW",
                decision["logical_probe_id"],
            )
            found[decision["logical_probe_id"]] = decision
    decisions = proof["decisions"]
    for qid, decision in decisions.items():
        normalize_decision(decision, roots, role="individual")
        require(decision["logical_probe_id"] == qid, "UNKNOWN_OR_DUPLICATE_REVIEW", qid)
        final = next((evidence[r][qid] for r in FINAL_ROLES if qid in evidence.get(r, {})), None)
        require(final == decision, "FINAL_DECISION_WITHOUT_EVIDENCE", qid)
    summary = review_summary(catalog, decisions)
    require(proof["summary"] == summary, "RECEIPT_RECOMPUTATION_FAILED")
    require(
        not any(
            s in BLOCKING for values in summary["defective_or_unresolved_mothers"].values() for s in values
        ),
        "UNRESOLVED_OR_SYSTEMIC_REVIEW_BLOCKS_EXPORT",
    )
    complete = set(summary["approved_complete_mothers"])
    if mode == "individual":
        return complete
    require(proof["catalog_root"] == digest(catalog), "AUDIT_SOURCE_MISMATCH")
    result, plan = proof["result"], proof["plan"]
    require(result.get("accepted") is True, "BATCH_AUDIT_NOT_ACCEPTED")
    audited = set(plan["sample_mothers"]) | set(plan["risk_mothers"])
    return complete & set(result["retained_mothers"]) & audited


def selection_plan(loaded: LoadedProject, proof: dict[str, Any], *, mode: str, split: str) -> dict[str, Any]:
    """Kit ``selection_plan``: the request a proof supports in a split (recomputed at validation)."""
    require(split in ("development", "test"), "SPLIT_MUST_BE_EXPLICIT")
    require(mode in SIGNED_MODES + UNSIGNED_MODES, "RELEASE_MODE_INVALID", mode)
    require(mode != "batch" or split == "test", "BATCH_IS_TEST_ONLY")
    catalog, membership, project = loaded.catalog, loaded.membership, loaded.project
    development = set(membership["development_problem_ids"])
    groups = mother_groups(catalog)
    allowed = set(groups) & development if split == "development" else set(groups) - development
    selected = check_proof(proof, mode, project, catalog) & allowed
    require(selected, "NO_COMPLETE_APPROVED_MOTHERS_IN_REQUESTED_SPLIT")
    members = {m["problem_id"]: m for m in membership["members"]}
    if (
        mode in UNSIGNED_MODES
    ):  # never a release (no signoff); the compiler already keeps duplicates out of splits
        members = {pid: {"dedup_state": "representative", "content_group_hint": pid} for pid in selected}
    require(
        all(members.get(pid, {}).get("dedup_state") == "representative" for pid in selected),
        "NONREPRESENTATIVE_MEMBER",
    )
    require(
        len({members[pid]["content_group_hint"] for pid in selected}) == len(selected),
        "DUPLICATE_RELEASE_MOTHER",
    )
    return {
        "schema_version": REQUEST_VERSION,
        "project_id": project["project_id"],
        "mode": mode,
        "split": split,
        "release_implementation": implementation_hashes(),
        "proof_root": digest(proof),
        "previous_assessment_root": None,
        "selected_mothers": sorted(selected),
        "probe_ids": sorted(q for pid in selected for q in groups[pid]),
        "excluded_mothers": sorted(set(groups) - selected),
        "development_reserved_mothers": sorted(development),
        "packet_policy": "gold_only_for_approved_nonempty_packet; raw_for_every_B",
        "coverage_limit": (
            "finite_population_batch_audit"
            if mode == "batch"
            else "selected_fully_reviewed_mothers_not_population_audit"
        ),
        "near_duplicate_policy": "explicit_team_signoff_required_not_automatically_solved",
    }


# Signoff -----------------------------------------------------------------------------------------------------------
def approval_template(target: str) -> dict[str, Any]:
    return {
        "schema_version": SIGNOFF_VERSION,
        "target_root": target,
        "status": "pending",
        "reviewer": "",
        "evidence_ref": "",
        "confirmations": {k: False for k in SIGNOFF_CHECKS},
    }


def signoff_record(request: dict[str, Any], signoff: dict[str, Any]) -> dict[str, Any]:
    record = {
        **approval_template(digest(request)),
        "status": "approved",
        "reviewer": signoff["reviewer"],
        "evidence_ref": signoff["evidence_ref"],
        "confirmations": {k: signoff["confirmations"].get(k) is True for k in SIGNOFF_CHECKS},
    }
    check_signoff(record, digest(request))
    return record


def check_signoff(record: Any, target: str) -> None:
    """Kit ``check_signoff``: exact fields, the request's root, approved, a reviewer, evidence, six true checks."""
    _exact(
        record,
        ("schema_version", "target_root", "status", "reviewer", "evidence_ref", "confirmations"),
        "SIGNOFF_FIELDS",
    )
    require(
        record["schema_version"] == SIGNOFF_VERSION and record["target_root"] == target,
        "SIGNOFF_WRONG_VERSION_OR_TARGET",
    )
    require(record["status"] == "approved", "EXPLICIT_SIGNOFF_REQUIRED")
    require(_text(record["reviewer"]), "SIGNOFF_REVIEWER_REQUIRED")
    require(_text(record["evidence_ref"]), "SIGNOFF_EVIDENCE_REQUIRED")
    _exact(record["confirmations"], SIGNOFF_CHECKS, "SIGNOFF_CONFIRMATIONS")
    require(all(v is True for v in record["confirmations"].values()), "SIGNOFF_CONFIRMATIONS")


# Freeze and the public records -------------------------------------------------------------------------------------
def authorization_for(
    item: dict[str, Any], request: dict[str, Any], proof: dict[str, Any], signoff: dict[str, Any] | None
) -> dict[str, Any]:
    qid, mode = item["logical_probe_id"], request["mode"]
    if mode == "individual":
        evidence, human = [proof["decisions"][qid]], "approved_individual"
    elif mode == "batch":
        evidence = [
            d
            for doc in proof["original_documents"]
            for d in doc["decisions"]
            if d["logical_probe_id"] == qid and d["status"] != "pending"
        ]
        human = "approved_sampled" if evidence else "not_sampled"
    else:
        evidence, human = [], "not_sampled"
    return {
        "schema_version": AUTHORIZATION_VERSION,
        "mode": mode,
        "request_root": digest(request),
        "proof_root": digest(proof),
        "signoff_root": digest(signoff) if signoff is not None else None,
        "review_target_root": item["review_target_root"],
        "human_item_review": human,
        "review_evidence": evidence,
        "release_approver": signoff["reviewer"] if signoff is not None else proof.get("exported_by", ""),
    }


def freeze(draft: dict[str, Any], authorization: dict[str, Any]) -> dict[str, Any]:
    """``{envelope, private, core, authorization}``; content_root = digest(core); instance_id binds both."""
    key = draft["key"]
    require(
        key["packet_plan"]["state"] in ("approved_nonempty", "approved_empty"),
        "PACKET_NOT_APPROVED",
        key["logical_probe_id"],
    )
    packet = key["packet_plan"]["state"] == "approved_nonempty"
    public_raw = {"messages": draft["raw_messages"], "attachment_ids": draft["attachment_ids"]}
    public_gold = (
        {"messages": draft["gold_messages"], "attachment_ids": draft["attachment_ids"]} if packet else None
    )
    core = {
        "private_core": key,
        "raw_view": draft["raw_view"],
        "gold_view": draft["gold_view"],
        "public_raw": public_raw,
        "public_gold": public_gold,
        "assets": draft["assets"],
        "displays": draft["displays"],
    }
    content_root = digest(core)
    instance_id = "PAI-" + digest({"content_root": content_root, "authorization": authorization})
    private = {
        **key,
        "content_root": content_root,
        "instance_id": instance_id,
        "instance_review_refs": ["qa-instance"],
    }
    envelope = {
        "schema_version": ENVELOPE_VERSION,
        "logical_probe_id": key["logical_probe_id"],
        "variant_id": key["variant_id"],
        "instance_id": instance_id,
        "language": key["language"],
        "content_root": content_root,
        "public_raw_hash": digest(public_raw),
        "public_gold_hash": digest(public_gold),
        "private_hash": digest(private),
    }
    return {"envelope": envelope, "private": private, "core": core, "authorization": authorization}


def public_record(item: dict[str, Any], frozen: dict[str, Any], condition: str, split: str) -> dict[str, Any]:
    """The fixed public allowlist: nothing of the key, the review or the source names reaches a model."""
    public = frozen["core"][f"public_{condition}"]
    assets = frozen["core"]["assets"]
    attachments = []
    for asset_id in public["attachment_ids"]:
        asset = assets[asset_id]
        suffix = Path(asset["relative_path"]).suffix.lower()
        require(suffix in IMAGE_SUFFIXES, "UNSUPPORTED_PUBLIC_IMAGE_EXTENSION", asset_id)
        attachments.append(
            {
                "asset_id": asset_id,
                "path": f"images/{asset['bytes_sha256']}{suffix}",
                "sha256": asset["bytes_sha256"],
                "width": asset["width"],
                "height": asset["height"],
            }
        )
    return {
        "schema_version": PUBLIC_SCHEMA,
        "instance_id": frozen["envelope"]["instance_id"],
        "logical_probe_id": item["logical_probe_id"],
        "task_id": item["task_id"],
        "interface": item["metadata"]["interface"],
        "language": item["language"],
        "split": split,
        "condition": condition,
        "input": {
            "messages": {"system": public["messages"]["system"], "user": public["messages"]["user"]},
            "attachments": attachments,
        },
    }


@dataclass
class Payload:
    frozen: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {"raw": [], "gold": []})
    members: list[dict[str, Any]] = field(default_factory=list)
    pools: dict[str, Any] = field(default_factory=dict)


def release_payload(
    loaded: LoadedProject, request: dict[str, Any], proof: dict[str, Any], signoff: dict[str, Any] | None
) -> Payload:
    """Kit ``release_payload``: freeze the requested probes, their public rows, membership and pools."""
    payload = Payload()
    wanted = set(request["probe_ids"])
    for item in (i for i in loaded.catalog["probes"] if i["logical_probe_id"] in wanted):
        authorization = authorization_for(item, request, proof, signoff)
        frozen = freeze(loaded.drafts[item["logical_probe_id"]], authorization)
        payload.frozen.append(frozen)
        packet = frozen["private"]["packet_plan"]["state"] == "approved_nonempty"
        joint = bool(frozen["private"]["read_targets"])
        require(
            packet == item["metadata"]["packet_nonempty_candidate"]
            and joint == item["metadata"]["L_candidate"],
            "B_L_P_MEMBERSHIP_CHANGED",
            item["logical_probe_id"],
        )
        require(
            item["metadata"]["interface"] != "T03-text" or not (packet or joint),
            "TEXT_BRANCH_HAS_IMAGE_READ_OR_PACKET",
            item["logical_probe_id"],
        )
        for condition in ("raw", "gold") if packet else ("raw",):
            payload.rows[condition].append(public_record(item, frozen, condition, request["split"]))
        human = authorization["human_item_review"]
        payload.members.append(
            {
                "logical_probe_id": item["logical_probe_id"],
                "instance_id": frozen["envelope"]["instance_id"],
                "problem_id": item["problem_id"],
                "group_id": item["group_id"],
                "content_group_hint": item["content_group_hint"],
                "interface": item["metadata"]["interface"],
                "split": request["split"],
                "B": True,
                "L": joint,
                "P": packet,
                "human_item_review": human,
                "metadata": {
                    **item["metadata"],
                    "P_approved": packet,
                    "benchmark_QA_approval": "approved_" + request["mode"],
                    "packet_state": frozen["private"]["packet_plan"]["state"],
                    "human_item_review": human,
                },
            }
        )
    payload.pools = {
        pool: {
            "probe_ids": [m["logical_probe_id"] for m in payload.members if m[pool]],
            "mother_ids": sorted({m["problem_id"] for m in payload.members if m[pool]}),
        }
        for pool in ("B", "L", "P")
    }
    return payload


def is_synthetic_source(problem_id: str, namespace: str, flagged: bool = False) -> bool:
    """The Kit's synthetic rule: a problem id or namespace starting with SYNTHETIC, or a source marked so."""
    return (
        flagged
        or str(problem_id).upper().startswith("SYNTHETIC")
        or str(namespace).upper().startswith("SYNTHETIC")
    )


def synthetic_flags(loaded: LoadedProject, request: dict[str, Any]) -> list[bool]:
    selected = set(request["selected_mothers"])
    return [
        is_synthetic_source(
            item["problem_id"],
            item["metadata"].get("source_namespace", ""),
            bool(item["metadata"].get("source_is_synthetic")),
        )
        for item in loaded.catalog["probes"]
        if item["problem_id"] in selected
    ]


def synthetic_guard(loaded: LoadedProject, request: dict[str, Any], synthetic: bool) -> None:
    flags = synthetic_flags(loaded, request)
    if synthetic:
        require(all(flags), "SYNTHETIC_MODE_ONLY_FOR_SYNTHETIC_INPUT")
    else:
        require(not any(flags), "SYNTHETIC_DATA_CANNOT_BE_BENCHMARK_RELEASE")


def counts_of(pools: dict[str, Any]) -> dict[str, Any]:
    return {
        pool: {"probes": len(v["probe_ids"]), "mothers": len(v["mother_ids"])} for pool, v in pools.items()
    }


def build_manifest(
    loaded: LoadedProject,
    request: dict[str, Any],
    signoff: dict[str, Any] | None,
    payload: Payload,
    synthetic: bool,
) -> dict[str, Any]:
    manifest = {
        "schema_version": RELEASE_VERSION,
        "artifact_mode": SYNTHETIC if synthetic else REVIEWED,
        "project_id": loaded.project["project_id"],
        "request_root": digest(request),
        "signoff_root": digest(signoff) if signoff is not None else None,
        "release_implementation": implementation_hashes(),
        "source_implementation": loaded.catalog["implementation_hashes"],
        "split": request["split"],
        "approval_mode": request["mode"],
        "counts": counts_of(payload.pools),
        "public_root": "public",
        "attachment_paths_relative_to": "public",
        "private_files_not_for_model": True,
        "model_runner_or_scorer_included": False,
        "research_controls_and_measurement_validation": "external_not_certified_by_data_export",
        "coverage_limit": request["coverage_limit"],
    }
    manifest["release_id"] = release_id_for(manifest, payload.members, payload.rows)
    return manifest


def release_id_for(manifest: dict[str, Any], members: list[Any], rows: dict[str, list[Any]]) -> str:
    body = {k: v for k, v in manifest.items() if k != "release_id"}
    return "NREL-" + digest({"manifest": body, "members": members, "public": rows})


def request_tree(request: dict[str, Any], proof: dict[str, Any]) -> Tree:
    return seal_tree(
        {
            "request.json": write_json_bytes(request),
            "review_proof.PRIVATE.json": write_json_bytes(proof),
            "approval.TEMPLATE.json": write_json_bytes(approval_template(digest(request))),
        }
    )


def release_tree(
    loaded: LoadedProject,
    project_tree: Tree,
    request: dict[str, Any],
    proof: dict[str, Any],
    signoff: dict[str, Any] | None,
    synthetic: bool,
) -> tuple[Tree, dict[str, Any], Payload]:
    """Every file of the release but the root FILE_MANIFEST.json, and its release.json."""
    payload = release_payload(loaded, request, proof, signoff)
    tree: Tree = {f"private/project/{k}": v for k, v in project_tree.items()}
    tree |= {f"private/request/{k}": v for k, v in request_tree(request, proof).items()}
    if signoff is not None:
        tree["private/signoff.json"] = write_json_bytes(signoff)
    for frozen in payload.frozen:
        tree[f"private/frozen/{frozen['envelope']['instance_id']}.json"] = write_json_bytes(frozen)
    for condition, rows in payload.rows.items():
        for row in rows:
            draft = loaded.drafts[row["logical_probe_id"]]
            for attachment in row["input"]["attachments"]:
                data = loaded.asset_bytes(draft, attachment["asset_id"])
                require(
                    bytes_digest(data) == attachment["sha256"],
                    "PUBLIC_IMAGE_SOURCE_CHANGED",
                    attachment["path"],
                )
                tree[f"public/{attachment['path']}"] = data
        tree[f"public/qa_{condition}.json"] = write_json_bytes(rows)
    tree["private/membership.json"] = write_json_bytes(payload.members)
    tree["private/pools.json"] = write_json_bytes(payload.pools)
    tree["private/mappings.json"] = write_json_bytes([f["private"] for f in payload.frozen])
    for name, schema in schema_bundle().items():
        tree[f"private/contract_schemas/{name}"] = write_json_bytes(schema)
    manifest = build_manifest(loaded, request, signoff, payload, synthetic)
    tree["release.json"] = write_json_bytes(manifest)
    tree["README.md"] = readme(manifest).encode("utf-8")
    return tree, manifest, payload


def readme(manifest: dict[str, Any]) -> str:
    synthetic = (
        "SYNTHETIC EXAMPLE ONLY: NOT BENCHMARK DATA.\n\n" if manifest["artifact_mode"] == SYNTHETIC else ""
    )
    unsigned = (
        "NO REVIEW SIGNOFF: exported by an admin override; this is not a reviewed release.\n\n"
        if manifest["signoff_root"] is None
        else ""
    )
    return (
        f"# PhysAlign Studio release {manifest['release_id']}\n\n{synthetic}{unsigned}"
        f"Split: {manifest['split']}. Approval: {manifest['approval_mode']}.\n\n"
        "A model may be given `public/qa_raw.json` (every probe, pool B) and `public/qa_gold.json` (the +GT "
        "condition, pool P), with the image files their attachment paths name, read relative to `public/`. "
        "Run every probe and condition in a fresh context.\n\n"
        "Nothing under `private/` (keys, membership, the review project, the request, the signoff) and none of "
        "release.json or this file may reach a model. `manage.py validate_release DIR` rebuilds the public part "
        "from `private/` and refuses any difference.\n"
    )


# Validation ---------------------------------------------------------------------------------------------------------
@dataclass
class ValidationReport:
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def codes(self) -> set[str]:
        return {e["code"] for e in self.errors}

    def add(self, code: str, detail: str = "") -> None:
        self.errors.append({"code": code, "detail": detail})

    def check(self, condition: Any, code: str, detail: str = "") -> None:
        if not condition:
            self.add(code, detail)


def validate_release(path: Path) -> ValidationReport:
    """Kit ``validate_release``, collecting every failure: rebuild from private/, compare, refuse leaks."""
    root, report = Path(path).resolve(), ValidationReport()
    try:
        release = _rebuild(root, report)
    except ReleaseError as error:
        report.add(error.code, error.detail)
        return report
    _compare(root, release.tree, release.manifest, release.rebuilt, report)
    _check_public_files(root, release.tree, report)
    for schema_name, value in _contract_documents(release):
        for problem in _schema_errors(schema_name, value):
            report.add("CONTRACT_SCHEMA_VIOLATION", problem)
    leakage_scan(root, release.payload.frozen, release.loaded.source_private, report)
    return report


@dataclass
class _Rebuilt:
    """A release directory read back, and what its private/ part rebuilds."""

    manifest: dict[str, Any]  # release.json as found
    loaded: LoadedProject
    request: dict[str, Any]
    proof: dict[str, Any]
    signoff: dict[str, Any] | None
    tree: Tree  # the rebuilt files
    rebuilt: dict[str, Any]  # the rebuilt release.json
    payload: Payload


def _rebuild(root: Path, report: ValidationReport) -> _Rebuilt:
    """Read the release back and rebuild it from private/. A failure that leaves nothing to compare raises
    ``ReleaseError``; the others are added to ``report``."""
    sealed = _load(root / "FILE_MANIFEST.json")
    report.check(sealed == directory_manifest(root), "FILE_MANIFEST_MISMATCH")
    manifest = _load(root / "release.json")
    loaded = load_project(root / "private" / "project")
    request_files = read_tree(root / "private" / "request")
    request = _json(request_files, "request.json")
    proof = _json(request_files, "review_proof.PRIVATE.json")
    require(isinstance(request, dict) and isinstance(manifest, dict), "RELEASE_FILES_MISSING_OR_INVALID")
    expected = selection_plan(loaded, proof, mode=request.get("mode", ""), split=request.get("split", ""))
    require(request == expected, "RELEASE_REQUEST_RECOMPUTATION_FAILED")
    signoff = _release_signoff(root, request)
    report.check(
        request["mode"] in SIGNED_MODES,
        "EXPLICIT_SIGNOFF_REQUIRED",
        f"{request['mode']}: exported without a review signoff",
    )
    require(manifest.get("artifact_mode") in (SYNTHETIC, REVIEWED), "RELEASE_MODE_INVALID")
    synthetic = manifest["artifact_mode"] == SYNTHETIC
    try:
        synthetic_guard(loaded, request, synthetic)
    except ReleaseError as error:
        report.add(error.code, error.detail)
    tree, rebuilt, payload = release_tree(
        loaded, read_tree(root / "private" / "project"), request, proof, signoff, synthetic
    )
    return _Rebuilt(manifest, loaded, request, proof, signoff, tree, rebuilt, payload)


def _release_signoff(root: Path, request: dict[str, Any]) -> Any:
    """private/signoff.json checked against the request (a signed mode requires it); None when there is none."""
    signoff_path = root / "private" / "signoff.json"
    if request["mode"] in SIGNED_MODES:
        require(signoff_path.is_file(), "EXPLICIT_SIGNOFF_REQUIRED", "private/signoff.json is missing")
    if not signoff_path.exists():
        return None
    signoff = _load(signoff_path)
    check_signoff(signoff, digest(request))
    return signoff


def _contract_documents(release: _Rebuilt) -> Iterator[tuple[str, Any]]:
    """(contract schema, document) for every document of the release the contract's schemas describe."""
    payload = release.payload
    for record in [*payload.rows["raw"], *payload.rows["gold"]]:
        yield "public_qa_record.schema.json", record
    for frozen in payload.frozen:
        yield "frozen_record.schema.json", frozen
        yield "instance_envelope.schema.json", frozen["envelope"]
        yield "private_mapping.schema.json", frozen["private"]
    if release.request["mode"] in SIGNED_MODES:
        for decision in release.proof.get("decisions", {}).values():
            yield "review_decision.schema.json", decision
    for name, value in (
        ("release_manifest.schema.json", release.manifest),
        ("release_request.schema.json", release.request),
        ("review_project.schema.json", release.loaded.project),
        ("release_signoff.schema.json", release.signoff),
    ):
        if value is not None:  # no signoff: an unsigned export, already refused
            yield name, value


def _compare(
    root: Path, tree: Tree, manifest: dict[str, Any], rebuilt: dict[str, Any], report: ValidationReport
) -> None:
    report.check(manifest == rebuilt, "RELEASE_MANIFEST_REBUILD_MISMATCH")
    report.check(
        manifest.get("release_implementation") == implementation_hashes(), "RELEASE_CODE_VERSION_CHANGED"
    )
    codes = {
        "private/membership.json": "RELEASE_MEMBERSHIP_OR_POOLS_CHANGED",
        "private/pools.json": "RELEASE_MEMBERSHIP_OR_POOLS_CHANGED",
        "private/mappings.json": "PRIVATE_MAPPINGS_CHANGED",
        "private/signoff.json": "SIGNOFF_CHANGED",
        "public/qa_raw.json": "PUBLIC_QA_REBUILD_MISMATCH",
        "public/qa_gold.json": "PUBLIC_QA_REBUILD_MISMATCH",
        "README.md": "README_REBUILD_MISMATCH",
    }
    for rel, data in sorted(tree.items()):
        if (
            rel.startswith("public/images/")
            or rel.startswith("private/project/")
            or rel.startswith("private/request/")
        ):
            continue  # images: by hash below; project and request: read back and checked above
        code = codes.get(rel) or (
            "FROZEN_REBUILD_MISMATCH"
            if rel.startswith("private/frozen/")
            else "SCHEMA_BUNDLE_CHANGED"
            if rel.startswith("private/contract_schemas/")
            else "RELEASE_MANIFEST_REBUILD_MISMATCH"
        )
        path = root / rel
        report.check(path.is_file() and path.read_bytes() == data, code, rel)
    frozen_dir = root / "private" / "frozen"
    expected_frozen = {rel.split("/")[-1] for rel in tree if rel.startswith("private/frozen/")}
    actual_frozen = {p.name for p in frozen_dir.glob("*")} if frozen_dir.is_dir() else set()
    report.check(
        actual_frozen == expected_frozen, "FROZEN_REBUILD_MISMATCH", "unexpected or missing frozen records"
    )


def _check_public_files(root: Path, tree: Tree, report: ValidationReport) -> None:
    """Exactly qa_raw.json, qa_gold.json and the declared images, each image with its declared bytes."""
    public = root / "public"
    allowed = {rel.removeprefix("public/"): data for rel, data in tree.items() if rel.startswith("public/")}
    present = (
        {p.relative_to(public).as_posix() for p in public.rglob("*") if p.is_file()}
        if public.is_dir()
        else set()
    )
    for rel in sorted(present - set(allowed)):
        report.add("UNDECLARED_PUBLIC_FILE_POSSIBLE_PRIVATE_LEAK", rel)
    for rel, data in sorted(allowed.items()):
        if not rel.startswith("images/"):
            continue
        if rel not in present:
            report.add("PUBLIC_IMAGE_MISSING", rel)
        elif bytes_digest((public / rel).read_bytes()) != bytes_digest(data):
            report.add("PUBLIC_IMAGE_BYTES_CHANGED", rel)


# Leakage scan (beyond the Kit: private strings that must not appear in what the compiler generated) -----------------
def _global_tokens(item: dict[str, Any]) -> list[tuple[str, str]]:
    key = item["private"]
    tokens = [(t["id"], "canonical entity id") for t in key["candidate_map"].values()]
    for meta in key["anchor_map"].values():
        tokens.extend((sid, "source record id") for sid in meta["source_ids"])
    tokens.extend((sha, "source file hash") for sha in key["source_hashes"].values())
    return tokens + [("candidate_map", "private key field"), ("gold_targets", "private key field")]


def _probe_tokens(item: dict[str, Any], private_strings: dict[str, Any]) -> list[tuple[str, str]]:
    """Private strings of one probe, checked against that probe's generated (non-source) public text."""
    key = item["private"]
    gold = {g["id"] for g in key["gold_targets"]}
    binding = key["response_contract"]["binding_key"]
    tokens = [
        (f'"{binding}": "{alias}"', "gold answer")
        for alias, t in key["candidate_map"].items()
        if t["id"] in gold
    ]
    source = private_strings.get(key["problem_id"], {})
    context = item["core"]["raw_view"]["context"]
    public_text = "\n".join([context["stem"], context["query"], *(o["text"] for o in context["options"])])
    for name in ("answer", "solution"):
        value = (source.get(name) or "").strip()
        if len(value) >= 4 and value not in public_text:
            tokens.append((value, name))
    tokens.extend(
        (n, "entity name") for n in source.get("entity_names", []) if len(n) >= 3 and n not in public_text
    )
    return tokens


def _generated_text(record: dict[str, Any], context: dict[str, Any]) -> str:
    """What the compiler wrote into a public record, with the original source text taken out."""
    user = re.sub(r"\[/?[REH][0-9]+\]", "", record["input"]["messages"]["user"])
    options = json.dumps(context["options"], ensure_ascii=False)
    for text in sorted((context["stem"], context["query"], options), key=len, reverse=True):
        if text:
            user = user.replace(text, "")
    return "\n".join(
        [user, record["input"]["messages"]["system"], json.dumps(record["input"]["attachments"])]
    )


def _tokens_present(tokens: set[str], files: dict[str, str]) -> dict[str, set[str]]:
    """For each file, which of ``tokens`` occur in its text as substrings: one Aho–Corasick pass per file
    (linear in the text), instead of one substring search per token and file, which at the paper's scale
    (≈4,000 probes × their ids × every exported file) took minutes."""
    automaton = ahocorasick.Automaton()
    for token in tokens:
        if token:
            automaton.add_word(token, token)
    always = {""} & tokens  # the empty string is in every text, as ``"" in text`` says
    if not len(automaton):
        return {name: set(always) for name in files}
    automaton.make_automaton()
    return {name: always | {found for _, found in automaton.iter(text)} for name, text in files.items()}


def leakage_scan(
    root: Path, frozen: list[dict[str, Any]], private_strings: dict[str, Any], report: ValidationReport
) -> None:
    files = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in (root / "public").rglob("*.json")
    }
    per_item = [_global_tokens(item) for item in frozen]
    present = _tokens_present({token for tokens in per_item for token, _ in tokens}, files)
    for tokens in per_item:  # the findings in the order of a token-by-token, file-by-file search
        for token, reason in tokens:
            for name in files:
                if token in present[name]:
                    report.add("PRIVATE_STRING_IN_PUBLIC", f"{reason} in {name}")
    by_id = {item["envelope"]["logical_probe_id"]: item for item in frozen}
    for name in ("public/qa_raw.json", "public/qa_gold.json"):
        try:
            records = json.loads(files.get(name, "[]"))
        except ValueError:
            continue  # already refused by the byte-for-byte rebuild
        for record in records if isinstance(records, list) else []:
            frozen_item = by_id.get(record.get("logical_probe_id")) if isinstance(record, dict) else None
            if frozen_item is None or "input" not in record:
                report.add(
                    "PUBLIC_RECORD_WITHOUT_FROZEN_ITEM",
                    str(record.get("logical_probe_id", "?")) if isinstance(record, dict) else "?",
                )
                continue
            _scan_record(record, frozen_item, private_strings, name, report)


def _scan_record(
    record: dict[str, Any],
    item: dict[str, Any],
    private_strings: dict[str, Any],
    name: str,
    report: ValidationReport,
) -> None:
    try:
        generated = _generated_text(record, item["core"]["raw_view"]["context"])
    except (KeyError, TypeError):
        report.add("PUBLIC_FIELD_FORBIDDEN", f"{name} ({record.get('logical_probe_id', '?')})")
        return
    for token, reason in _probe_tokens(item, private_strings):
        if token in generated:
            report.add("PRIVATE_STRING_IN_PUBLIC", f"{reason} in {name} ({record['logical_probe_id']})")
    packet = item["core"]["gold_view"]["recognition_packet"]
    if record.get("condition") == "raw" and packet and json.dumps(packet, ensure_ascii=False) in generated:
        report.add("PRIVATE_STRING_IN_PUBLIC", f"reading in the raw condition ({record['logical_probe_id']})")
