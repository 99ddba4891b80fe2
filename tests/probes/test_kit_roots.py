"""The Kit's roots as review/kit_decisions.py recomputes them from a Kit preview (pure, no database)."""

from __future__ import annotations

import copy

import pytest

from kit.canonical import digest
from probes.compiler import compile_parent
from review.kit_decisions import KitFileError, OurProbe, differences, prospective_core, verified_roots

from . import kit_demo as demo

PLAN = {"empty_reason": None, "observation_ids": ["o_v003"], "review_ref": None, "state": "pending_review"}


def core(plan=PLAN):
    return {
        "private_core": {"packet_plan": dict(plan), "task_id": "T03"},
        "raw_view": {"task_id": "T03"},
        "implementation_hashes": {
            "renderer.py": "e4904e9e3bf7fb640c5c51efd132b10078f29d0e17a80a235f2e23b10109bdff"
        },
    }


def test_prospective_core_approves_only_the_packet_as_the_kit_does():
    assert prospective_core(core())["private_core"]["packet_plan"] == {
        "empty_reason": None,
        "observation_ids": ["o_v003"],
        "review_ref": "qa-packet",
        "state": "approved_nonempty",
    }
    empty = prospective_core(core({**PLAN, "observation_ids": []}))
    assert empty["private_core"]["packet_plan"] == {
        "empty_reason": "no_independent_readable_primitive",
        "observation_ids": [],
        "review_ref": "qa-packet",
        "state": "approved_empty",
    }
    assert {k: v for k, v in prospective_core(core()).items() if k != "private_core"} == {
        k: v for k, v in core().items() if k != "private_core"
    }
    with pytest.raises(KitFileError, match="NOT_PENDING_DRAFT"):
        prospective_core(core({**PLAN, "state": "approved_nonempty"}))


def test_verified_roots_recompute_both_roots_from_the_preview():
    c = core()
    approved = copy.deepcopy(c)
    approved["private_core"]["packet_plan"].update(state="approved_nonempty", review_ref="qa-packet")
    item = {"logical_probe_id": demo.T03_IMAGE, "review_target_root": digest(approved)}
    assert verified_roots(item, {"core": c, "content_root": digest(c)}) == (digest(c), digest(approved))
    with pytest.raises(KitFileError, match="KIT_PREVIEW_CONTENT_ROOT_MISMATCH"):
        verified_roots(item, {"core": c, "content_root": digest(approved)})
    with pytest.raises(KitFileError, match="KIT_REVIEW_TARGET_ROOT_MISMATCH"):
        verified_roots({**item, "review_target_root": digest(c)}, {"core": c, "content_root": digest(c)})


@pytest.fixture(scope="module")
def probe():
    return next(p for p in compile_parent(demo.demo_source()).probes if p.logical_probe_id == demo.T03_IMAGE)


def _ours(probe, **changes):
    fields = dict(
        key=probe.key,
        raw_view=probe.raw_view,
        gold_view=probe.gold_view,
        raw_messages=probe.raw_messages,
        gold_messages=probe.gold_messages,
        attachment_ids=probe.attachment_ids,
        displays=probe.displays,
        pixels={
            "img_0": demo.ORIGINAL_PIXELS_SHA,
            **{v.view_id: v.record["pixels_sha256"] for v in probe.views},
        },
        bytes={},
    )
    fields.update(changes)
    return OurProbe(**fields)


def _kit(probe, manifest="d" * 64):
    key = copy.deepcopy(probe.key)
    key["source_hashes"].update(manifest=manifest, review="e" * 64)
    assets = {
        "img_0": {"pixels_sha256": demo.ORIGINAL_PIXELS_SHA},
        **{v.view_id: {"pixels_sha256": v.record["pixels_sha256"]} for v in probe.views},
    }
    return {
        "private_core": key,
        "raw_view": probe.raw_view,
        "gold_view": probe.gold_view,
        "public_raw": {"messages": probe.raw_messages, "attachment_ids": probe.attachment_ids},
        "public_gold": {"messages": probe.gold_messages, "attachment_ids": probe.attachment_ids},
        "displays": probe.displays,
        "assets": assets,
    }


def test_the_same_probe_has_no_differences_whatever_the_kit_only_source_hashes(probe):
    assert differences(_kit(probe), _ours(probe)) == []


def test_each_difference_is_named(probe):
    ours_with_manifest = {**probe.key, "source_hashes": {**probe.key["source_hashes"], "manifest": "0" * 64}}
    assert differences(_kit(probe), _ours(probe, key=ours_with_manifest)) == ["private_core.source_hashes"]
    moved = copy.deepcopy(probe.displays)
    moved[0]["marks"][0]["points_px"][0][0] += 1
    assert differences(_kit(probe), _ours(probe, displays=moved)) == ["displays"]
    pixels = {"img_0": "0" * 64, **{v.view_id: v.record["pixels_sha256"] for v in probe.views}}
    assert differences(_kit(probe), _ours(probe, pixels=pixels)) == ["assets.img_0.pixels_sha256"]
    gold = {**probe.key, "gold_targets": [{"id": demo.PE_BLOCK_B, "kind": "entity"}]}
    assert differences(_kit(probe), _ours(probe, key=gold)) == ["private_core.gold_targets"]
