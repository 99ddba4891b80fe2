"""One test per blocking code: the group (or parent) is refused with that code, never dropped silently."""

from __future__ import annotations

import copy

import pytest

from probes.compiler import compile_parent
from probes.compiler.errors import CompileError
from probes.compiler.scorability import check_observations, check_scorable
from probes.compiler.source_index import build_source_index

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
    doc["physical_nodes"].append(
        {**doc["physical_nodes"][0], "id": pid, "name": "Block 3", "visual_anchor_ids": [vid]}
    )


def _add_glyphs(doc, count):
    """``count`` more atomic diagram glyphs ("x"), each at its own place along the bottom of the image."""
    for i in range(count):
        x, y = (i % 16) * 60, 800 + (i // 16) * 40
        doc["visual_nodes"].append(
            {
                **_visual(doc, "v003"),
                "id": f"v{100 + i}",
                "text": "x",
                "bbox_1000": [x + 1, y, x + 40, y + 30],
            }
        )


KIT_GLYPH = r"$v_0 = 3\,\mathrm{m/s}$ − 中"  # the Kit blocked its T03 group on this reading

CASES = {
    "EXPLICIT_PLURAL_REFERENCE": ("T02", lambda d: _mention(d, "m001").update(quote="Block A and block B")),
    "SINGLETON_BASIS_UNKNOWN": ("T02", lambda d: _mention(d, "m001").update(quote="Block")),
    "REFERENCE_NOT_EXPLICIT_ENTITY_MENTION": ("T02", lambda d: _mention(d, "m001").update(role="other")),
    "REFERENCE_TARGET_NOT_SINGLE": (
        "T02",
        lambda d: d["bindings"].append({**d["bindings"][2], "id": "b004", "to_id": "p002"}),
    ),
    "REFERENCE_SCOPE_UNBOUNDED": (
        "T02",
        lambda d: (
            d["text_mentions"].append(
                {"id": "m006", "occurrence": 1, "quote": "Block Z", "role": "entity", "section": "stem"}
            ),
            d["bindings"].append({**d["bindings"][2], "id": "b004", "from_id": "m006"}),
        ),
    ),
    "REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED": (
        "T02",
        lambda d: (
            d["text_mentions"].append(
                {"id": "m006", "occurrence": 5, "quote": "Block A", "role": "entity", "section": "stem"}
            ),
            d["bindings"].append({**d["bindings"][2], "id": "b004", "from_id": "m006"}),
        ),
    ),
    "SOURCE_AMBIGUITY_SCOPE_UNBOUNDED": (
        "T03",
        lambda d: d["ambiguities"].append(
            {
                "id": "u001",
                "scope": "x",
                "description": "unclear",
                "candidate_ids": [],
                "evidence_visual_ids": [],
                "evidence_mention_ids": [],
            }
        ),
    ),
    "CANDIDATE_UNIVERSE_INCOMPLETE": (
        "T03",
        lambda d: _visual(d, "v001").update(bbox_1000=[60, 400, 60, 705]),
    ),
    "PACKET_SOURCE_UNRESOLVED": ("T02", lambda d: _visual(d, "v003").update(bbox_1000=[70, 200, 70, 280])),
    "QUANTITY_OWNER_UNRESOLVED": ("T03", lambda d: _quantity(d, "q002").update(owner_id="")),
    "IMAGE_SELECTOR_UNRESOLVED": (
        "T03",
        lambda d: (
            d["visual_nodes"].append({**_visual(d, "v003"), "id": "v004", "bbox_1000": [200, 200, 240, 280]}),
            _quantity(d, "q001").update(visual_anchor_ids=["v003", "v004"]),
        ),
    ),
    "TEXT_SELECTOR_UNRESOLVED": ("T03", lambda d: _mention(d, "m004").update(occurrence=2)),
    "EMPTY_IMAGE_GLYPH_NOT_TEXT_FALLBACK": ("T03", lambda d: _visual(d, "v003").update(text=" ")),
    "QUANTITY_SCOPE_UNBOUNDED": ("T03", lambda d: _mention(d, "m004").update(quote="3 kg")),
    "QUANTITY_IDENTITY_OR_OWNER_CONFLICT": (
        "T03",
        lambda d: d["quantities"].append(
            {**_quantity(d, "q001"), "id": "q003", "owner_id": "p002", "text_mention_ids": []}
        ),
    ),
    "QUANTITIES_UNQUALIFIED_IDENTITY_CONFLICT": (
        "T03",
        lambda d: d["quantities"].append(
            {**_quantity(d, "q001"), "id": "q003", "symbol_latex": "M", "text_mention_ids": []}
        ),
    ),
    "INDISTINGUISHABLE_CANDIDATES": ("T03", lambda d: _add_block_c(d, bbox=(590, 400, 850, 705))),
    # scorability (Kit prepare_probe): the glyph read is the gold reading of the T03-image probe
    "UNSUPPORTED_GOLD_READING": ("T03", lambda d: _visual(d, "v003").update(text=KIT_GLYPH)),
    "EMPTY_OBSERVATION_TEXT": ("T03", lambda d: _visual(d, "v003").update(text="\u200b")),
    "DUPLICATE_OBSERVATION_AT_SAME_ORIGIN": (
        "T03",
        lambda d: d["visual_nodes"].append({**_visual(d, "v003"), "id": "v004"}),
    ),
    "GOLD_OUTSIDE_LEGAL_CANDIDATES": (
        "T02",
        lambda d: (
            d["physical_nodes"].append(
                {**d["physical_nodes"][0], "id": "p003", "name": "Block 3", "visual_anchor_ids": []}
            ),
            d["bindings"][2].update(to_id="p003"),
        ),
    ),
    "PACKET_BUDGET_EXCEEDED": ("T02", lambda d: _add_glyphs(d, 64)),
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


@pytest.mark.parametrize(
    ("code", "overrides", "mutate"),
    [
        ("LANGUAGE_UNRESOLVED", {"language": "fr"}, None),
        ("SOURCE_IDENTITY_MISSING", {"source_split": " "}, None),
        (
            "IDENTITY_TYPE_CONFLICT",
            {},
            lambda d: (
                d["physical_nodes"][1].update(type="particle"),
                d["bindings"].append(
                    {
                        **d["bindings"][2],
                        "id": "b004",
                        "type": "same_entity_as",
                        "from_id": "p001",
                        "to_id": "p002",
                    }
                ),
            ),
        ),
    ],
)
def test_parent_wide_refusals(code, overrides, mutate):
    result = _compile(mutate, **overrides)
    assert result.probes == []
    assert [(b.task_id, b.code) for b in result.blocked] == [("parent", code)]


def test_the_packet_budget_is_64_entries():
    t02 = next(p for p in _compile(lambda d: _add_glyphs(d, 63)).probes if p.task_id == "T02")
    assert len(t02.gold_view["recognition_packet"]) == 64
    (blocked,) = _compile(lambda d: _add_glyphs(d, 64)).blocked
    assert (blocked.task_id, blocked.code, blocked.detail) == ("T02", "PACKET_BUDGET_EXCEEDED", "65")


def test_an_unblocked_probe_survives_a_blocked_sibling():
    result = _compile(lambda d: _quantity(d, "q002").update(owner_id=""))
    assert {p.interface for p in result.probes} == {"T02-single", "T03-image"}


def test_a_same_entity_merge_is_one_candidate():
    def merge(doc):
        _add_block_c(doc)
        doc["bindings"].append(
            {**doc["bindings"][2], "id": "b004", "type": "same_entity_as", "from_id": "p003", "to_id": "p001"}
        )

    result = _compile(merge)
    t02 = next(p for p in result.probes if p.task_id == "T02")
    assert len(t02.key["candidate_map"]) == 2
    assert any(len(c["locators"]) == 2 for c in t02.raw_view["candidates"])


# --- Scorability: what the Kit refuses after compiling a group (prepare_probe) -----------------------


def _baseline():
    return {p.interface: p for p in _compile().probes}


@pytest.mark.parametrize("text", [KIT_GLYPH, r"\vec{F}", "$m", "$$", "\u200b\u2060"])
def test_an_unscorable_glyph_reading_blocks_only_its_t03_group(text):
    image_group = _baseline()["T03-image"].native_query["group_id"]
    result = _compile(lambda d: _visual(d, "v003").update(text=text))
    assert [(b.task_id, b.group_id, b.scope) for b in result.blocked] == [("T03", image_group, ["q001"])]
    assert result.blocked[0].code in ("UNSUPPORTED_GOLD_READING", "EMPTY_OBSERVATION_TEXT")
    assert all(p.native_query["group_id"] != image_group for p in result.probes)
    # the siblings still compile: the T02 referent and the T03-text quantity of the same parent
    assert sorted((p.interface, p.logical_probe_id) for p in result.probes) == [
        ("T02-single", demo.T02),
        ("T03-text", demo.T03_TEXT),
    ]
    assert not any(p.key["joint_eligible"] for p in result.probes)  # nothing unscorable reaches pool L


def test_the_kits_glyph_is_refused_with_its_code_and_reading():
    result = _compile(lambda d: _visual(d, "v003").update(text=KIT_GLYPH))
    (blocked,) = result.blocked
    assert (blocked.code, blocked.reasons) == ("UNSUPPORTED_GOLD_READING", ["UNSUPPORTED_GOLD_READING"])
    assert blocked.detail == "R1: '$v_0 = 3\\\\,\\\\mathrm{m/s}$ − 中' under ocr_label_v2_1"
    t02 = next(p for p in result.probes if p.task_id == "T02")
    assert t02.key["packet_plan"]["observation_ids"] == []  # not an atomic glyph: no T02 packet entry either


def test_a_zero_width_glyph_is_empty_observation_text_first():
    # "\u200b".strip() is not blank, so the glyph is selected; the Kit's observation check refuses it
    # before the contract check would (both fail; the Kit reports the first)
    (blocked,) = _compile(lambda d: _visual(d, "v003").update(text="\u200b")).blocked
    assert (blocked.code, blocked.detail) == ("EMPTY_OBSERVATION_TEXT", "o_v003")


def test_a_supported_latex_glyph_still_compiles_into_pool_l():
    result = _compile(lambda d: _visual(d, "v003").update(text=r"$\mathrm{m}$"))
    assert result.blocked == []
    image = next(p for p in result.probes if p.interface == "T03-image")
    assert image.key["read_targets"][0]["expected"] == r"$\mathrm{m}$" and image.key["joint_eligible"]


def _prompt_set(**task_changes):
    from probes.compiler.prompts import DEFAULT_PROMPTS, DEFAULT_TASKS, PromptSet

    tasks = {task: {**spec, **task_changes.get(task, {})} for task, spec in DEFAULT_TASKS.items()}
    return PromptSet(DEFAULT_PROMPTS, tasks)


@pytest.mark.parametrize(
    ("changes", "code", "blocked_tasks", "kept"),
    [
        ({"T03": {"allowed_cardinalities": ["set"]}}, "TASK_OUTPUT_CONTRACT", ["T03", "T03"], ["T02-single"]),
        ({"T03": {"allowed_cardinalities": None}}, "TASK_OUTPUT_CONTRACT", ["T03", "T03"], ["T02-single"]),
        ({"T02": {"binding_key": "thing"}}, "BINDING_KEY", ["T02"], ["T03-image", "T03-text"]),
    ],
)
def test_a_task_registry_that_does_not_define_the_contract_blocks_that_task(
    changes, code, blocked_tasks, kept
):
    result = compile_parent(demo.demo_source(), prompt_set=_prompt_set(**changes))
    assert sorted(b.task_id for b in result.blocked) == blocked_tasks
    assert {b.code for b in result.blocked} == {code}
    assert sorted(p.interface for p in result.probes) == kept


def _t03_image():
    probe = _baseline()["T03-image"]
    index = build_source_index(demo.demo_source())
    return copy.deepcopy(probe.key), copy.deepcopy(probe.raw_view), copy.deepcopy(probe.gold_view), index


def _set(path, value):
    def apply(key, raw, gold, observations):
        target = {"key": key, "raw": raw, "gold": gold, "obs": observations}[path[0]]
        for step in path[1:-1]:
            target = target[step]
        target[path[-1]] = value(target[path[-1]]) if callable(value) else value

    return apply


# Codes the compiler cannot reach from any workspace (it derives each value from the checked one);
# each is still checked, so a future change that breaks the derivation blocks the group.
TAMPERED = {
    "OBSERVATION_UNAPPROVED": _set(("obs", "o_v003", "state"), "pending"),
    "DUPLICATE_OR_UNKNOWN_OBSERVATION_ALIAS": _set(
        ("key", "anchor_map", "R1", "observation_ids"), ["o_v999"]
    ),
    "READ_OBSERVATION_ANCHOR_MISMATCH": _set(("key", "read_targets", 0, "anchor_alias"), "R2"),
    "READ_TEXT_MISMATCH": _set(("key", "read_targets", 0, "expected"), "M"),
    "READ_ORIGIN_MISMATCH": _set(("key", "read_targets", 0, "origin_fingerprint"), "0" * 64),
    "RAW_HAS_PACKET": _set(("raw", "recognition_packet"), [{"anchor": "R1", "text": "m"}]),
    "RAW_GOLD_UNMATCHED": _set(("gold", "query_anchor_ids"), ["R2"]),
    "PACKET_INVALID": _set(("gold", "recognition_packet"), [{"anchor": "R1", "text": " "}]),
    "PACKET_TEXT_MISMATCH": _set(("gold", "recognition_packet"), [{"anchor": "R1", "text": "M"}]),
    "RESPONSE_CONTRACT_KEYS": _set(("key", "response_contract", "extra"), 1),
    "CARDINALITY": _set(("key", "response_contract", "cardinality"), "many"),
    "READ_SHAPE": _set(("key", "response_contract", "read_shape"), "object"),
    "READ_ANCHORS": _set(("key", "response_contract", "read_anchor_ids"), ["E1"]),
    "DUPLICATE_READ_ANCHOR": _set(("key", "response_contract", "read_anchor_ids"), ["R1", "R1"]),
    "READ_SHAPE_ARITY": _set(("key", "response_contract", "read_shape"), "object_by_anchor"),
    "JOINT_CONTRACT_MISMATCH": _set(("key", "joint_eligible"), False),
    "READ_TARGET_ORDER_OR_COVERAGE": _set(("key", "read_targets"), []),
    "UNKNOWN_NORMALIZER": _set(("key", "read_targets", 0, "normalizer_id"), "ocr_label_v9"),
    "CANDIDATE_MAP": _set(("key", "candidate_map"), lambda m: {"E1": m["E1"]}),
    "ALIAS_SCHEMA": _set(("key", "candidate_map"), lambda m: {"E1": m["E1"], "X2": m["E2"]}),
    "CANONICAL_TARGET": _set(("key", "candidate_map", "E1", "id"), ""),
    "DUPLICATE_CANONICAL_CANDIDATE": _set(("key", "candidate_map"), lambda m: {"E1": m["E1"], "E2": m["E1"]}),
    "EMPTY_GOLD": _set(("key", "gold_targets"), []),
    "GOLD_SCHEMA": _set(("key", "gold_targets"), lambda g: [{**g[0], "name": "Block 1"}]),
    "GOLD_CANDIDATE_COVERAGE": _set(("key", "gold_targets"), [{"kind": "entity", "id": "PE-other"}]),
    "SINGLE_TARGET_COUNT": _set(
        ("key", "gold_targets"), lambda g: sorted([g[0], {"kind": "entity", "id": "PE-other"}], key=str)
    ),
    "MAIN_JOINT_REQUIRES_IMAGE_READING": _set(("obs", "o_v003", "asset_role"), "option"),
    "PUBLIC_READ_CONTRACT_MISMATCH": lambda key, raw, gold, obs: (
        raw.update(read_anchor_ids=[]),
        gold.update(read_anchor_ids=[]),
    ),
    "CORE_QUERY_ANCHOR_ARITY": lambda key, raw, gold, obs: (
        raw.update(query_anchor_ids=[]),
        gold.update(query_anchor_ids=[]),
    ),
}


@pytest.mark.parametrize("code", sorted(TAMPERED))
def test_each_scorability_check_refuses_its_own_defect(code):
    from probes.compiler.prompts import DEFAULT_TASKS

    key, raw, gold, index = _t03_image()
    observations = copy.deepcopy(index.observations)
    check_observations(key, observations)
    check_scorable(key, raw, gold, observations, DEFAULT_TASKS)  # the untouched probe passes every check
    if code == "SINGLE_TARGET_COUNT":
        key["candidate_map"]["E3"] = {"kind": "entity", "id": "PE-other"}
    TAMPERED[code](key, raw, gold, observations)
    with pytest.raises(CompileError) as raised:
        check_observations(key, observations)
        check_scorable(key, raw, gold, observations, DEFAULT_TASKS)
    assert raised.value.code == code


@pytest.mark.django_db
def test_the_blocked_group_reaches_the_database_and_the_run_page(client, role_users, django_user_model):
    from probes.models import CompileIssue, Probe
    from probes.services import compile_run_create, compile_run_execute

    from .conftest import make_demo_parent

    doc = demo.pass4()
    _visual(doc, "v003").update(text=KIT_GLYPH)
    make_demo_parent(django_user_model, pass4=doc)
    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    assert run.counts["probes"] == 2 and run.counts["blocked_groups"] == 1
    assert list(CompileIssue.objects.filter(run=run).values_list("task_id", "code", "scope")) == [
        ("T03", "UNSUPPORTED_GOLD_READING", ["q001"])
    ]
    assert sorted(Probe.objects.values_list("logical_probe_id", "in_l")) == sorted(
        [(demo.T02, False), (demo.T03_TEXT, False)]
    )
    client.force_login(role_users["admin"])
    assert "<code>UNSUPPORTED_GOLD_READING</code> — 1" in client.get(f"/compile/{run.pk}/").content.decode()
