"""Golden values from the kit's compiled synthetic demo draft, and byte-for-byte determinism."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.canonical import bytes_digest, canonical_bytes
from probes.compiler import compile_parent, validate_prompt_files
from probes.compiler.aliases import neutral_aliases
from probes.compiler.source_index import build_source_index

from . import kit_demo as demo
from .prompt_fixture import KIT_SHAPED_PROMPTS, KIT_SHAPED_TASKS


@pytest.fixture(scope="module")
def compiled():
    result = compile_parent(demo.demo_source())
    return {p.logical_probe_id: p for p in result.probes}, result


def test_pass4_file_hash_and_entity_ids_match_the_kit():
    index = build_source_index(demo.demo_source())
    assert index.sha == demo.PASS4_SHA
    assert index.identity_map == {"p001": demo.PE_BLOCK_A, "p002": demo.PE_BLOCK_B}
    assert index.entity_locators == {demo.PE_BLOCK_A: [demo.BOX_A], demo.PE_BLOCK_B: [demo.BOX_B]}
    assert list(index.observations) == ["o_v003"]


def test_the_demo_compiles_to_exactly_the_kits_three_probes(compiled):
    probes, result = compiled
    assert sorted(probes) == sorted([demo.T02, demo.T03_IMAGE, demo.T03_TEXT])
    assert result.blocked == []
    assert probes[demo.T02].native_query["group_id"] == demo.T02_GROUP


@pytest.mark.parametrize("qid", [demo.T02, demo.T03_IMAGE, demo.T03_TEXT])
def test_aliases_display_order_gold_anchors_views_match_the_kit(compiled, qid):
    probe, expected = compiled[0][qid], demo.EXPECTED[qid]
    assert probe.interface == expected["interface"]
    assert {a: t["id"] for a, t in probe.key["candidate_map"].items()} == expected["candidate_map"]
    assert [c["alias"] for c in probe.raw_view["candidates"]] == expected["display"]
    assert [g["id"] for g in probe.key["gold_targets"]] == expected["gold"]
    gold_aliases = sorted(a for a, t in probe.key["candidate_map"].items() if t["id"] in expected["gold"])
    assert gold_aliases == expected["gold_aliases"]
    assert probe.raw_view["anchors"] == expected["anchors"]
    assert probe.raw_view["recognition_packet"] == []
    assert probe.gold_view["recognition_packet"] == expected["packet"]
    assert [(d["marks"][0]["alias"], d["marks"][0]["points_px"]) for d in probe.displays] == expected["marks"]
    assert all(d["source_to_display"] == [1, 0, 32, 0, 1, 32] for d in probe.displays)
    assert all((v.record["width"], v.record["height"]) == (384, 264) for v in probe.views)
    assert probe.attachment_ids == expected["attachments"]


def test_t03_image_read_target_comes_from_the_glyph(compiled):
    key = compiled[0][demo.T03_IMAGE].key
    assert [(t["anchor_alias"], t["observation_id"], t["expected"]) for t in key["read_targets"]] == [
        ("R1", "o_v003", "m")
    ]
    assert key["response_contract"] == {
        "binding_key": "owner",
        "cardinality": "one",
        "read_anchor_ids": ["R1"],
        "read_shape": "string",
    }
    assert key["joint_eligible"] is True
    assert compiled[0][demo.T03_TEXT].key["joint_eligible"] is False
    assert compiled[0][demo.T03_TEXT].key["packet_plan"]["observation_ids"] == []


def test_neutral_aliases_do_not_depend_on_input_order():
    targets = [{"kind": "entity", "id": demo.PE_BLOCK_A}, {"kind": "entity", "id": demo.PE_BLOCK_B}]
    assert neutral_aliases(targets, demo.T02) == neutral_aliases(list(reversed(targets)), demo.T02)
    assert neutral_aliases(targets, demo.T02)[1] == ["E2", "E1"]


def test_kit_shaped_prompt_files_render_exact_messages():
    prompt_set = validate_prompt_files(KIT_SHAPED_PROMPTS, KIT_SHAPED_TASKS)
    probes = {p.logical_probe_id: p for p in compile_parent(demo.demo_source(), prompt_set=prompt_set).probes}
    t02 = probes[demo.T02]
    expected = (
        "<<stem>>\nBlock A and block B are at rest. The mass is m. The mass of block B is 2 kg.\n"
        "<<query>>\nFind the acceleration.\n<<options>>\n[]\n"
        "<<images>>\nV1: img_0; R2\nV2: img_0; E2\nV3: img_0; E1\nimg_0: original source image\n"
        "<<text>>\nR1 (stem): [R1]Block A[/R1] and block B are at rest. The mass is m. The mass of block B is 2 kg.\n"
        "<<evidence>>\nR1 (stem): [R1]Block A[/R1] and block B are at rest. The mass is m. The mass of block B is 2 kg.\n"
        'R2: img_0 {"bbox_1000": [70, 200, 115, 280], "type": "bbox"}\n<<references>>\n\n'
        '<<candidates>>\nE2: img_0 {"bbox_1000": [60, 400, 285, 705], "type": "bbox"}\n'
        'E1: img_0 {"bbox_1000": [590, 400, 850, 705], "type": "bbox"}\n'
        "<<question>>\nPick the referent of R1.\n<<rule>>\nOne ID.\n<<reading>>\nEMPTY\n"
        '<<output>>\n{"referent": "<candidate ID>"}'
    )
    assert t02.raw_messages == {"system": "SYSTEM-EN", "user": expected}
    assert t02.gold_messages["user"] == expected.replace(
        "<<reading>>\nEMPTY", '<<reading>>\n[{"anchor": "R2", "text": "m"}]'
    )
    t03 = probes[demo.T03_IMAGE]
    assert "<<question>>\nRead R1 verbatim.\nWho owns R1?\n" in t03.raw_messages["user"]
    assert t03.raw_messages["user"].endswith(
        '<<output>>\n{"read": "<transcription>", "owner": "<candidate ID>"}'
    )


def test_default_wording_has_the_twelve_sections_and_raw_gold_differ_only_in_the_packet(compiled):
    probe = compiled[0][demo.T02]
    headers = [
        line for line in probe.raw_messages["user"].split("\n") if line.startswith("[") and line.endswith("]")
    ]
    assert headers[:3] == ["[Original statement]", "[Original question]", "[Original answer options]"]
    from probes.compiler.prompts import EN_HEADERS

    assert [h for h in headers if h in EN_HEADERS] == list(EN_HEADERS)
    raw_lines, gold_lines = probe.raw_messages["user"].split("\n"), probe.gold_messages["user"].split("\n")
    assert [i for i, (a, b) in enumerate(zip(raw_lines, gold_lines, strict=True)) if a != b] == [
        raw_lines.index("[Local reading information]") + 1
    ]


def _fingerprint(result):
    return [
        (
            p.logical_probe_id,
            canonical_bytes(
                [
                    p.key,
                    p.raw_view,
                    p.gold_view,
                    p.raw_messages,
                    p.gold_messages,
                    p.displays,
                    p.content_root,
                    p.review_target_root,
                ]
            ),
            [bytes_digest(v.png) for v in p.views],
        )
        for p in result.probes
    ]


@settings(max_examples=10, deadline=None)
@given(st.permutations(["v001", "v002", "v003"]))
def test_recompiling_is_byte_identical_and_ids_ignore_record_order(order):
    first = _fingerprint(compile_parent(demo.demo_source()))
    assert first == _fingerprint(compile_parent(demo.demo_source()))
    doc = demo.pass4()
    by_id = {v["id"]: v for v in doc["visual_nodes"]}
    doc["visual_nodes"] = [copy.deepcopy(by_id[v]) for v in order]
    reordered = compile_parent(demo.demo_source(passes={**demo.demo_source().passes, "pass4": doc}))
    assert sorted(p.logical_probe_id for p in reordered.probes) == sorted(q for q, *_ in first)
    for probe in reordered.probes:
        expected = demo.EXPECTED[probe.logical_probe_id]
        assert [c["alias"] for c in probe.raw_view["candidates"]] == expected["display"]
        assert probe.gold_view["recognition_packet"] == expected["packet"]


def test_the_demo_image_and_views_have_the_kits_pixels(compiled):
    from probes.compiler.render import asset_record

    assert (
        asset_record(demo.stand_in_image(), "images/img_0.png")["pixels_sha256"] == demo.ORIGINAL_PIXELS_SHA
    )
    views = {v.view_id: v.record["pixels_sha256"] for v in compiled[0][demo.T03_IMAGE].views}
    assert views == demo.VIEW_PIXELS[demo.T03_IMAGE]


def test_view_png_bytes_are_pillows_default_encoding_as_the_kit_saves_them(compiled):
    """The Kit saves ``canvas.save(path, format="PNG")`` and nothing else; re-encoding the decoded view that
    way must give the very same bytes (a non-default zlib level, ``optimize`` or extra chunks would not)."""
    import io

    from PIL import Image

    for probe in compiled[0].values():
        for view in probe.views:
            with Image.open(io.BytesIO(view.png)) as img:
                img.load()
                again = io.BytesIO()
                img.save(again, format="PNG")
            assert again.getvalue() == view.png
            assert view.record["bytes_sha256"] == bytes_digest(view.png)
            fast = io.BytesIO()
            img.save(fast, format="PNG", compress_level=1)
            assert fast.getvalue() != view.png
