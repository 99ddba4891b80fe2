"""Coordinates (pixel ↔ bbox_1000), span vectors shared with the browser code, diffs, consolidation."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from annotation.workspace import bbox_px_to_1000, consolidate_gobs, k_to_px, px_to_1000
from annotation.workspace_diff import document_diff
from kit.passes.spans import resolve_span

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests/data/span_vectors.json").read_text(encoding="utf-8"))["vectors"]


def test_every_integer_pixel_of_a_320x200_image_round_trips_exactly():
    for size in (320, 200):
        assert [k_to_px(px_to_1000(px, size), size) for px in range(size + 1)] == list(range(size + 1))


def test_a_box_drawn_on_320x200_round_trips():
    box = bbox_px_to_1000((17, 43, 251, 199), 320, 200)
    assert box == [53, 215, 784, 995]
    assert [k_to_px(box[0], 320), k_to_px(box[1], 200), k_to_px(box[2], 320), k_to_px(box[3], 200)] == [
        17,
        43,
        251,
        199,
    ]


def test_rounding_is_half_up_and_clamped():
    assert px_to_1000(0.16, 1000) == 0
    assert px_to_1000(1, 2000) == 1  # 0.5 rounds up
    assert px_to_1000(-5, 320) == 0
    assert px_to_1000(400, 320) == 1000
    assert bbox_px_to_1000((300, 150, 10, 20), 320, 200) == [31, 100, 938, 750]  # corners normalised


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['quote']}#{v['occurrence']}")
def test_python_resolve_span_matches_shared_vectors(vector):
    result = resolve_span(vector["text"], vector["quote"], vector["occurrence"])
    assert result.status == vector["status"]
    assert (list(result.span) if result.span else None) == vector["span"]
    assert [list(m) for m in result.all_matches] == vector["all_matches"]


def test_js_spans_and_coords_match_shared_vectors():
    node = shutil.which("node")
    assert node, "node is needed to run the workspace's JavaScript span code"
    script = f"""
import {{ resolveSpan, mentionFromSelection, toUtf16 }} from "{ROOT}/static/js/workspace/spans.js";
import {{ pxTo1000, kToIntPx }} from "{ROOT}/static/js/workspace/coords.js";
import fs from "node:fs";
const vectors = JSON.parse(fs.readFileSync("{ROOT}/tests/data/span_vectors.json", "utf8")).vectors;
const out = vectors.map((v) => {{
  const r = resolveSpan(v.text, v.quote, v.occurrence);
  let sel = null;
  if (r.span) {{ sel = mentionFromSelection(v.text, toUtf16(v.text, r.span[0]), toUtf16(v.text, r.span[1])); }}
  return {{ status: r.status, span: r.span, all_matches: r.all_matches, sel }};
}});
const round = [320, 200].map((size) => Array.from({{ length: size + 1 }}, (_, px) => kToIntPx(pxTo1000(px, size), size) === px).every(Boolean));
console.log(JSON.stringify({{ out, round }}));
"""
    result = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["round"] == [True, True]
    for vector, got in zip(VECTORS, data["out"], strict=True):
        assert got["status"] == vector["status"]
        assert got["span"] == vector["span"]
        assert got["all_matches"] == vector["all_matches"]
        if vector["status"] == "resolved_exact":
            # selecting exactly the resolved span in the browser gives back the same quote and occurrence
            assert got["sel"]["quote"] == vector["quote"]
            assert got["sel"]["occurrence"] == vector["occurrence"]
            assert [got["sel"]["start"], got["sel"]["end"]] == vector["span"]


def test_document_diff_lists_added_removed_and_changed_fields():
    before = {"problem_id": "p", "visual_nodes": [{"id": "v001", "text": "m"}, {"id": "v002", "text": "F"}]}
    after = {"problem_id": "p", "visual_nodes": [{"id": "v001", "text": "M"}, {"id": "v003", "text": "g"}]}
    diff = document_diff(before, after)
    assert diff.counts == {"added": 1, "removed": 1, "changed": 1}
    changed = next(c for c in diff.changes if c.change == "changed")
    assert (
        changed.record_id,
        changed.fields[0].field,
        changed.fields[0].before,
        changed.fields[0].after,
    ) == ("v001", "text", "m", "M")


def test_consolidation_copies_pass1_applies_pass3_updates_and_renumbers_bindings():
    pass1 = {"visual_nodes": [{"id": "v001"}], "ambiguities": []}
    pass2 = {
        "physical_nodes": [{"id": "p001", "name": "rod"}],
        "bindings": [{"id": "b001", "from_id": "v001"}],
        "ambiguities": [],
    }
    pass3 = {
        "new_or_updated_physical_nodes": [{"id": "p001", "name": "rod*"}, {"id": "p002"}],
        "text_mentions": [{"id": "m001"}],
        "quantities": [],
        "bindings": [{"id": "b001", "from_id": "m001"}],
        "constraints": [],
        "query_target": {"mention_id": "m001"},
        "ambiguities": [],
    }
    g = consolidate_gobs(
        problem_id="x",
        pass1=pass1,
        pass2=pass2,
        pass3=pass3,
        current={"relations": [{"id": "r001"}], "domain": "electromagnetism"},
    )
    assert g["visual_nodes"] == pass1["visual_nodes"]
    assert [n["name"] if "name" in n else n["id"] for n in g["physical_nodes"]] == ["rod*", "p002"]
    assert [(b["id"], b["from_id"]) for b in g["bindings"]] == [("b001", "v001"), ("b002", "m001")]
    assert g["relations"] == [{"id": "r001"}] and g["domain"] == "electromagnetism"
    assert g["query_target"] == {"mention_id": "m001"}


def test_later_references_name_the_records_of_later_passes_that_point_at_a_region_or_entity():
    from annotation.workspace import later_references

    pass2 = {
        "problem_id": "x",
        "physical_nodes": [{"id": "p001", "visual_anchor_ids": ["v002"]}],
        "bindings": [
            {
                "id": "b001",
                "type": "labels",
                "from_id": "v002",
                "to_id": "p001",
                "evidence_visual_ids": ["v002"],
            }
        ],
        "ambiguities": [],
    }
    pass3 = {
        "quantities": [{"id": "q001", "owner_id": "p001", "visual_anchor_ids": ["v003"]}],
        "query_target": {"mention_id": "m001", "location_node_ids": ["p002"]},
    }
    pass4 = {
        "visual_nodes": [{"id": "v002"}],
        "relations": [{"id": "r001", "subject_id": "p001", "object_id": "p002"}],
    }
    assert later_references(pass_no=1, later={2: pass2, 3: pass3, 4: pass4}) == {
        "v002": ["Pass 2 p001", "Pass 2 b001"],
        "v003": ["Pass 3 q001"],
    }
    assert later_references(pass_no=2, later={3: pass3, 4: pass4}) == {
        "p001": ["Pass 3 q001", "Pass 4 r001"],
        "p002": ["Pass 3 query_target", "Pass 4 r001"],
    }
    assert later_references(pass_no=3, later={4: pass4}) == {}
