"""Write a Kit native draft directory (Kit §2.9: catalog.PRIVATE.json, probes/<id>/preview.PRIVATE.json,
FILE_MANIFEST.json) holding given compiled probes, with the Kit's core shape. Kit-only core fields carry the
values of the Kit's synthetic demo draft. Roots are computed here by hand from the Kit's definitions."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from kit.canonical import bytes_digest, canonical_bytes, digest
from probes.compiler.render import asset_record
from tests.probes import kit_demo as demo

KIT_ONLY = {
    "semantic_registry_hash": "6a4bae31216ca78cf2b90e953a5103481db71c7851d1e71b14f333bf312c3276",
    "implementation_hashes": {
        "renderer.py": "e4904e9e3bf7fb640c5c51efd132b10078f29d0e17a80a235f2e23b10109bdff",
        "review_workflow.py": "0c11362fcac0d8df6ed6c1754d3205924aac3e0ca7b19aaf8492cdad4603f70f",
    },
    "source_index_is_synthetic": False,
    "native_projection": {
        "approval": None,
        "profile_id": "native_binding_draft_v1",
        "sidecar": {
            "bytes_sha256": "77b0731a482053f55b452515e99dbca090722fb1678454563193a87b2ba24ec3",
            "relative_path": "native_span_sidecar.json",
        },
    },
}
KIT_SOURCE_HASHES = {
    "manifest": "d164f44bc3b3739542e3db588839ce3f13c4a9a680a1105f19cc85df13848078",
    "review": "0019b7f2cf71ebab7176bd94d9096ca86c45741b9929e7c0b6d33df7658b17a0",
}


def kit_core(probe) -> dict:
    key = copy.deepcopy(probe.key)
    key["source_hashes"] = {**key["source_hashes"], **KIT_SOURCE_HASHES}
    assets = {"img_0": asset_record(demo.stand_in_image(), "images/img_0.png")}
    assets.update({v.view_id: v.record for v in probe.views})
    return json.loads(
        canonical_bytes(
            {
                "private_core": key,
                "raw_view": probe.raw_view,
                "gold_view": probe.gold_view,
                "public_raw": {"messages": probe.raw_messages, "attachment_ids": probe.attachment_ids},
                "public_gold": {"messages": probe.gold_messages, "attachment_ids": probe.attachment_ids},
                "assets": assets,
                "displays": probe.displays,
                "source_index_hash": "0" * 64,
                "observation_store_hash": "1" * 64,
                "renderer_profile": {"id": "full_frame_single_locator_bbox_v1", "pillow": "12.3.0"},
                "native_query": probe.native_query,
                **KIT_ONLY,
            }
        )
    )


def prospective_root(core: dict) -> str:
    """review_workflow.prospective by hand: the packet approved (non-empty) or approved empty."""
    approved = copy.deepcopy(core)
    plan = approved["private_core"]["packet_plan"]
    if plan["observation_ids"]:
        plan.update(state="approved_nonempty", empty_reason=None, review_ref="qa-packet")
    else:
        plan.update(
            state="approved_empty", empty_reason="no_independent_readable_primitive", review_ref="qa-packet"
        )
    return digest(approved)


def write_kit_draft(
    root: Path, probes, *, edit_core=None, split="development_reserved", tamper_content_root=False
) -> dict:
    """Write the draft; return its catalog. ``edit_core(qid, core)`` changes a Kit core before hashing."""
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    items = []
    for probe in sorted(probes, key=lambda p: p.logical_probe_id):
        qid = probe.logical_probe_id
        core = kit_core(probe)
        if edit_core:
            edit_core(qid, core)
        rel = f"probes/{qid}/preview.PRIVATE.json"
        content_root = "f" * 64 if tamper_content_root else digest(core)
        files[rel] = canonical_bytes(
            {
                "core": core,
                "content_root": content_root,
                "closure_root": probe.closure_root,
                "packet_review_root": probe.packet_review_root,
                "review_checks_completed": False,
            }
        )
        items.append(
            {
                "logical_probe_id": qid,
                "problem_id": probe.key["problem_id"],
                "task_id": probe.task_id,
                "language": "en",
                "preview": rel,
                "review_target_root": prospective_root(core),
                "split": split,
                "metadata": {"interface": probe.interface},
            }
        )
    catalog = {
        "schema_version": "physalign_draft_catalog_v1",
        "native_profile": "native_binding_draft_v1",
        "converter_version": "physalign_converter_v1.2.0_native_draft",
        "membership_root": "2" * 64,
        "implementation_hashes": KIT_ONLY["implementation_hashes"],
        "probes": items,
    }
    files["catalog.PRIVATE.json"] = canonical_bytes(catalog)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "FILE_MANIFEST.json").write_bytes(
        canonical_bytes({rel: bytes_digest(d) for rel, d in files.items()})
    )
    return catalog


CONFIRMED = {
    k: True
    for k in (
        "source_semantics",
        "complete_targets",
        "distinct_candidates",
        "rendered_locations",
        "packet_no_binding_leakage",
        "diagram_asset_scope",
    )
}


def decision(item: dict, status: str = "approved", **changes) -> dict:
    base = {
        "logical_probe_id": item["logical_probe_id"],
        "review_target_root": item["review_target_root"],
        "status": status,
        "reviewer": "Kit Reviewer A" if status != "pending" else "",
        "blind_answer": "owner: E2" if status != "pending" else "",
        "confirmations": dict(CONFIRMED) if status == "approved" else {k: False for k in CONFIRMED},
        "note": "source contradicts the binding" if status == "rejected" else "",
    }
    base.update(changes)
    return base


def legacy_file(catalog: dict, decisions: list[dict]) -> dict:
    return {
        "schema_version": "physalign_decisions_v1",
        "catalog_root": digest(catalog),
        "decisions": decisions,
    }
