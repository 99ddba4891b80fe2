"""The public kit's synthetic demo parent (``SYNTHETIC_TEST_ONLY``) restated as data, and the values
the kit's compiled draft holds for it (ids, aliases, display orders, gold, view geometry).

Only facts needed to check interoperability are restated here: record ids, coordinates, quotes and
the synthetic stem. The demo image is drawn from the Kit's regression-fixture coordinates (two boxes and
the glyph "m" on a white 320×200 canvas): its *pixels* equal the Kit demo's ``diagram.png`` (pixels_sha256
below), its PNG *bytes* do not (the Kit's file was encoded elsewhere), so values that hash the original's
bytes (origins, source_version) differ from the Kit's while every pixel hash of the views agrees.
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from probes.compiler import ParentSource, SourceImage

STEM = "Block A and block B are at rest. The mass is m. The mass of block B is 2 kg."
QUERY = "Find the acceleration."


def _visual(vid, bbox, *, kind="object_shape", text=""):
    return {
        "bbox_1000": bbox,
        "center_1000": [-1, -1],
        "confidence": "high",
        "id": vid,
        "image_id": "img_0",
        "keypoints_1000": [],
        "radius_1000": -1,
        "subtype": "",
        "text": text,
        "type": kind,
    }


def _binding(bid, kind, src, dst, *, visual=(), mention=(), provenance=("IMAGE",)):
    return {
        "evidence_mention_ids": list(mention),
        "evidence_visual_ids": list(visual),
        "from_id": src,
        "id": bid,
        "provenance": list(provenance),
        "to_id": dst,
        "type": kind,
    }


def pass4() -> dict:
    return {
        "ambiguities": [],
        "bindings": [
            _binding("b001", "represents", "v001", "p001", visual=["v001"]),
            _binding("b002", "represents", "v002", "p002", visual=["v002"]),
            _binding("b003", "refers_to", "m001", "p001", mention=["m001"], provenance=["TEXT"]),
        ],
        "constraints": [
            {
                "evidence_mention_ids": ["m002"],
                "evidence_visual_ids": [],
                "id": "c001",
                "kind": "at_rest",
                "provenance": ["TEXT"],
                "subject_ids": ["p001", "p002"],
                "value_text": "are at rest",
            }
        ],
        "domain": "mechanics",
        "physical_nodes": [
            {
                "confidence": "high",
                "id": "p001",
                "name": "Block 1",
                "provenance": ["IMAGE"],
                "subtype": "",
                "symbol": "",
                "text_mention_ids": [],
                "type": "body",
                "visual_anchor_ids": ["v001"],
            },
            {
                "confidence": "high",
                "id": "p002",
                "name": "Block 2",
                "provenance": ["IMAGE"],
                "subtype": "",
                "symbol": "",
                "text_mention_ids": [],
                "type": "body",
                "visual_anchor_ids": ["v002"],
            },
        ],
        "problem_id": "SYNTHETIC_TEST_ONLY",
        "quantities": [
            {
                "id": "q001",
                "kind": "mass",
                "owner_id": "p001",
                "provenance": ["IMAGE", "TEXT"],
                "symbol_latex": "m",
                "text_mention_ids": ["m003"],
                "unit_latex": "",
                "value_latex": "",
                "visual_anchor_ids": ["v003"],
            },
            {
                "id": "q002",
                "kind": "mass",
                "owner_id": "p002",
                "provenance": ["TEXT"],
                "symbol_latex": "m_B",
                "text_mention_ids": ["m004"],
                "unit_latex": "kg",
                "value_latex": "2",
                "visual_anchor_ids": [],
            },
        ],
        "query_target": {
            "location_node_ids": [],
            "mention_id": "m005",
            "target_kind": "acceleration",
            "target_node_ids": ["p001"],
            "target_symbol_latex": "",
            "time_or_event_node_ids": [],
        },
        "relations": [
            {
                "confidence": "high",
                "evidence_mention_ids": [],
                "evidence_visual_ids": ["v001", "v002"],
                "id": "r001",
                "object_id": "p002",
                "predicate": "touches",
                "provenance": ["IMAGE"],
                "quantity_id": "",
                "subject_id": "p001",
            }
        ],
        "schema_version": "physgraph_obs_v0.1",
        "text_mentions": [
            {"id": "m001", "occurrence": 1, "quote": "Block A", "role": "entity", "section": "stem"},
            {"id": "m002", "occurrence": 1, "quote": "are at rest", "role": "constraint", "section": "stem"},
            {"id": "m003", "occurrence": 2, "quote": "m", "role": "quantity", "section": "stem"},
            {"id": "m004", "occurrence": 1, "quote": "2 kg", "role": "quantity", "section": "stem"},
            {
                "id": "m005",
                "occurrence": 1,
                "quote": "acceleration",
                "role": "query_target",
                "section": "query",
            },
        ],
        "visual_nodes": [
            _visual("v001", [60, 400, 285, 705]),
            _visual("v002", [590, 400, 850, 705]),
            _visual("v003", [70, 200, 115, 280], kind="text_glyph", text="m"),
        ],
    }


def stand_in_image() -> bytes:
    image = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 80, 90, 140), outline="black", width=2)
    draw.rectangle((190, 80, 270, 140), outline="black", width=2)
    draw.text((25, 42), "m", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def demo_source(**overrides) -> ParentSource:
    doc = pass4()
    fields = dict(
        problem_id="SYNTHETIC_TEST_ONLY",
        source_dataset="SYNTHETIC_UNIT_TEST",
        source_split="test_fixture",
        source_sample_id="SYNTHETIC_TEST_ONLY",
        language="en",
        stem=STEM,
        query=QUERY,
        options=[],
        images=[SourceImage("img_0", stand_in_image(), 320, 200, ".png")],
        passes={
            "pass1": {"problem_id": "SYNTHETIC_TEST_ONLY"},
            "pass2": {"problem_id": "SYNTHETIC_TEST_ONLY"},
            "pass3": {"problem_id": "SYNTHETIC_TEST_ONLY"},
            "pass4": doc,
        },
        pass4_reviewer="SYNTHETIC_TEST_NOT_HUMAN",
    )
    fields.update(overrides)
    return ParentSource(**fields)


# --- What the kit's compiled draft holds for this parent ------------------------------------------
PASS4_SHA = "4c1ec70420db33d2f83500757c4cabba608a5bc034f2aa8075ac5b615c1baf5f"
PE_BLOCK_A = "PE-eae41e91c5291580a371bfa47ae67ad1105996e5abe87686c6c8555f01a202a0"  # p001
PE_BLOCK_B = "PE-f6fd7b3d38fdc500661c992e8a2a4e427e9ae7b15cbacaa6aff4014b98e74926"  # p002
T02 = "PAQ-9ee5ebde40654ca1db8ee64de167fa9cfd39a6a4173e6d21dda381b14a6cfb5b"
T03_IMAGE = "PAQ-4747b5ff5250d0f122b6bad47b6d908abeace08a5a30ccc30f048661837014bc"
T03_TEXT = "PAQ-e792d0fcd342014a700ebec434fd1b4016614ca94341f0f7e5451d5d00a70581"
T02_GROUP = "NG-042b59237660b2037ee5d294ae38b62624aee98b730f72955774e7148048b835"
STEM_SHA = "a749f7e152bb55ba0a44ef03fdff71be8cbcf739aa05bea8a7545f3f556ea0b3"

BOX_A = {
    "geometry": {"bbox_1000": [60, 400, 285, 705], "type": "bbox"},
    "image_id": "img_0",
    "kind": "visual",
}
BOX_B = {
    "geometry": {"bbox_1000": [590, 400, 850, 705], "type": "bbox"},
    "image_id": "img_0",
    "kind": "visual",
}
GLYPH_M = {
    "geometry": {"bbox_1000": [70, 200, 115, 280], "type": "bbox"},
    "image_id": "img_0",
    "kind": "visual",
}
POINTS_GLYPH_M = [[54.4, 72.0], [68.8, 72.0], [68.8, 88.0], [54.4, 88.0]]
POINTS_BOX_A = [[51.2, 112.0], [123.2, 112.0], [123.2, 173.0], [51.2, 173.0]]
POINTS_BOX_B = [[220.8, 112.0], [304.0, 112.0], [304.0, 173.0], [220.8, 173.0]]

EXPECTED = {
    T02: {
        "interface": "T02-single",
        "candidate_map": {"E1": PE_BLOCK_B, "E2": PE_BLOCK_A},
        "display": ["E2", "E1"],
        "gold": [PE_BLOCK_A],
        "gold_aliases": ["E2"],
        "anchors": {
            "R1": {
                "end": 7,
                "kind": "text",
                "quote": "Block A",
                "section": "stem",
                "section_sha256": STEM_SHA,
                "start": 0,
            },
            "R2": GLYPH_M,
        },
        "packet": [{"anchor": "R2", "text": "m"}],
        "marks": [("R2", POINTS_GLYPH_M), ("E2", POINTS_BOX_A), ("E1", POINTS_BOX_B)],
        "attachments": ["V1", "V2", "V3", "img_0"],
    },
    T03_IMAGE: {
        "interface": "T03-image",
        "candidate_map": {"E1": PE_BLOCK_B, "E2": PE_BLOCK_A},
        "display": ["E1", "E2"],
        "gold": [PE_BLOCK_A],
        "gold_aliases": ["E2"],
        "anchors": {"R1": GLYPH_M},
        "packet": [{"anchor": "R1", "text": "m"}],
        "marks": [("R1", POINTS_GLYPH_M), ("E1", POINTS_BOX_B), ("E2", POINTS_BOX_A)],
        "attachments": ["V1", "V2", "V3", "img_0"],
    },
    T03_TEXT: {
        "interface": "T03-text",
        "candidate_map": {"E1": PE_BLOCK_A, "E2": PE_BLOCK_B},
        "display": ["E2", "E1"],
        "gold": [PE_BLOCK_B],
        "gold_aliases": ["E2"],
        "anchors": {
            "R1": {
                "end": 75,
                "kind": "text",
                "quote": "2 kg",
                "section": "stem",
                "section_sha256": STEM_SHA,
                "start": 71,
            }
        },
        "packet": [],
        "marks": [("E2", POINTS_BOX_B), ("E1", POINTS_BOX_A)],
        "attachments": ["V1", "V2", "img_0"],
    },
}

# Pixel hashes (Kit §2.10 ``pixels_sha256``) of the original and of each rendered view in the Kit's demo
# draft (preview.PRIVATE.json ``core.assets``); the bytes hashes there come from the Kit's Pillow build.
ORIGINAL_PIXELS_SHA = "eefdb71ced72bbbcb9dece6da5e712eab0f70c5bd7bc2b63a4371b5dd2ad2095"
VIEW_PIXELS = {
    T03_IMAGE: {
        "V1": "dc73234338542491ac62143f3b1086caa3d3c1a49992081f2f287cd745481f84",
        "V2": "f0935deba615c7f32541e3f010f146d2f3b401648d5f38bc41788aa6c73827b9",
        "V3": "cd9f00257562096a7864fb595e03f1023e52a45103363a5b020acb72ac76a5d3",
    },
}
