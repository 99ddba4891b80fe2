"""One test per blocking code: the group (or parent) is refused with that code, never dropped silently."""

from __future__ import annotations

import pytest

from probes.compiler import compile_parent

from . import kit_demo as demo


def _compile(mutate=None, **overrides):
    doc = demo.pass4()
    if mutate:
        mutate(doc)
    source = demo.demo_source(**overrides)
    source = demo.demo_source(**{**overrides, "passes": {**source.passes, "pass4": doc}})
    return compile_parent(source)


def _codes(result, task=None):
    return {code for b in result.blocked if task in (None, b.task_id) for code in b.reasons}


def _mention(doc, mid):
    return next(m for m in doc["text_mentions"] if m["id"] == mid)


def _quantity(doc, qid):
    return next(q for q in doc["quantities"] if q["id"] == qid)


def _visual(doc, vid):
    return next(v for v in doc["visual_nodes"] if v["id"] == vid)


def _add_block_c(doc, bbox=(300, 400, 500, 705), vid="v004", pid="p003"):
    doc["visual_nodes"].append({**_visual(doc, "v001"), "id": vid, "bbox_1000": list(bbox)})
    doc["physical_nodes"].append({**doc["physical_nodes"][0], "id": pid, "name": "Block 3", "visual_anchor_ids": [vid]})


CASES = {
    "EXPLICIT_PLURAL_REFERENCE": ("T02", lambda d: _mention(d, "m001").update(quote="Block A and block B")),
    "SINGLETON_BASIS_UNKNOWN": ("T02", lambda d: _mention(d, "m001").update(quote="Block")),
    "REFERENCE_NOT_EXPLICIT_ENTITY_MENTION": ("T02", lambda d: _mention(d, "m001").update(role="other")),
    "REFERENCE_TARGET_NOT_SINGLE": ("T02", lambda d: d["bindings"].append(
        {**d["bindings"][2], "id": "b004", "to_id": "p002"})),
    "REFERENCE_SCOPE_UNBOUNDED": ("T02", lambda d: (d["text_mentions"].append(
        {"id": "m006", "occurrence": 1, "quote": "Block Z", "role": "entity", "section": "stem"}),
        d["bindings"].append({**d["bindings"][2], "id": "b004", "from_id": "m006"}))),
    "REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED": ("T02", lambda d: (d["text_mentions"].append(
        {"id": "m006", "occurrence": 5, "quote": "Block A", "role": "entity", "section": "stem"}),
        d["bindings"].append({**d["bindings"][2], "id": "b004", "from_id": "m006"}))),
    "SOURCE_AMBIGUITY_SCOPE_UNBOUNDED": ("T03", lambda d: d["ambiguities"].append(
        {"id": "u001", "scope": "x", "description": "unclear", "candidate_ids": [], "evidence_visual_ids": [],
         "evidence_mention_ids": []})),
    "CANDIDATE_UNIVERSE_INCOMPLETE": ("T03", lambda d: _visual(d, "v001").update(bbox_1000=[60, 400, 60, 705])),
    "PACKET_SOURCE_UNRESOLVED": ("T02", lambda d: _visual(d, "v003").update(bbox_1000=[70, 200, 70, 280])),
    "QUANTITY_OWNER_UNRESOLVED": ("T03", lambda d: _quantity(d, "q002").update(owner_id="")),
    "IMAGE_SELECTOR_UNRESOLVED": ("T03", lambda d: (d["visual_nodes"].append(
        {**_visual(d, "v003"), "id": "v004", "bbox_1000": [200, 200, 240, 280]}),
        _quantity(d, "q001").update(visual_anchor_ids=["v003", "v004"]))),
    "TEXT_SELECTOR_UNRESOLVED": ("T03", lambda d: _mention(d, "m004").update(occurrence=2)),
    "EMPTY_IMAGE_GLYPH_NOT_TEXT_FALLBACK": ("T03", lambda d: _visual(d, "v003").update(text=" ")),
    "QUANTITY_SCOPE_UNBOUNDED": ("T03", lambda d: _mention(d, "m004").update(quote="3 kg")),
    "QUANTITY_IDENTITY_OR_OWNER_CONFLICT": ("T03", lambda d: d["quantities"].append(
        {**_quantity(d, "q001"), "id": "q003", "owner_id": "p002", "text_mention_ids": []})),
    "QUANTITIES_UNQUALIFIED_IDENTITY_CONFLICT": ("T03", lambda d: d["quantities"].append(
        {**_quantity(d, "q001"), "id": "q003", "symbol_latex": "M", "text_mention_ids": []})),
    "INDISTINGUISHABLE_CANDIDATES": ("T03", lambda d: _add_block_c(d, bbox=(590, 400, 850, 705))),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_blocking_code(code):
    task, mutate = CASES[code]
    result = _compile(mutate)
    assert code in _codes(result, task), [(b.task_id, b.reasons) for b in result.blocked]
    blocked = [b for b in result.blocked if code in b.reasons]
    assert all(b.scope for b in blocked) and all(b.code == sorted(b.reasons)[0] for b in blocked)


def test_a_single_candidate_universe_is_refused():
    def single(doc):
        doc["physical_nodes"] = doc["physical_nodes"][:1]
        doc["bindings"] = [b for b in doc["bindings"] if b["to_id"] == "p001"]
        doc["quantities"] = doc["quantities"][:1]
    assert "CANDIDATE_UNIVERSE_INVALID" in _codes(_compile(single))


@pytest.mark.parametrize(("code", "overrides", "mutate"), [
    ("LANGUAGE_UNRESOLVED", {"language": "fr"}, None),
    ("SOURCE_IDENTITY_MISSING", {"source_split": " "}, None),
    ("IDENTITY_TYPE_CONFLICT", {}, lambda d: (d["physical_nodes"][1].update(type="particle"), d["bindings"].append(
        {**d["bindings"][2], "id": "b004", "type": "same_entity_as", "from_id": "p001", "to_id": "p002"}))),
])
def test_parent_wide_refusals(code, overrides, mutate):
    result = _compile(mutate, **overrides)
    assert result.probes == []
    assert [(b.task_id, b.code) for b in result.blocked] == [("parent", code)]


def test_an_unblocked_probe_survives_a_blocked_sibling():
    result = _compile(lambda d: _quantity(d, "q002").update(owner_id=""))
    assert {p.interface for p in result.probes} == {"T02-single", "T03-image"}


def test_a_same_entity_merge_is_one_candidate():
    def merge(doc):
        _add_block_c(doc)
        doc["bindings"].append({**doc["bindings"][2], "id": "b004", "type": "same_entity_as", "from_id": "p003",
                                "to_id": "p001"})
    result = _compile(merge)
    t02 = next(p for p in result.probes if p.task_id == "T02")
    assert len(t02.key["candidate_map"]) == 2
    assert any(len(c["locators"]) == 2 for c in t02.raw_view["candidates"])
