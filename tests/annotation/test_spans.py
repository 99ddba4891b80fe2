"""Mention → span resolution, rule literal_nonoverlap_1based_v1 (Kit §2.7)."""

from __future__ import annotations

import hashlib

import pytest

from kit.canonical import digest
from kit.passes import (
    MATCH_POLICY,
    SpanResolution,
    SpanStructuralError,
    apply_unique_exact_repair,
    find_exact_matches,
    resolve_span,
)

ZH_STEM = "质量为m的物块静止在倾角为θ的斜面上，物块受拉力F。"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_resolved_exact_record_has_exactly_the_kit_fields():
    resolution = resolve_span("A block of mass m on a block.", "block", 2)

    record = resolution.as_record()
    hash_free = {key: value for key, value in record.items() if key != "decision_content_hash"}
    assert hash_free == {
        "section_sha256": sha("A block of mass m on a block."),
        "quote": "block",
        "original_occurrence": 2,
        "all_matches": [[2, 7], [23, 28]],
        "match_policy": "literal_nonoverlap_1based_v1",
        "span": [23, 28],
        "status": "resolved_exact",
    }
    assert record["decision_content_hash"] == digest(hash_free)
    assert resolution.span == (23, 28)
    assert resolution.is_resolved is True


def test_decision_content_hash_is_sha256_of_the_canonical_record_bytes():
    resolution = resolve_span("aaa", "aa", 1)

    canonical = (
        '{"all_matches":[[0,2]],"match_policy":"literal_nonoverlap_1based_v1",'
        '"original_occurrence":1,"quote":"aa",'
        '"section_sha256":"9834876dcfb05cb167a5c24953eba58c4ac89b1adf57f28f2f9d09af107ee8f0",'
        '"span":[0,2],"status":"resolved_exact"}'
    )
    assert resolution.section_sha256 == "9834876dcfb05cb167a5c24953eba58c4ac89b1adf57f28f2f9d09af107ee8f0"
    assert resolution.decision_content_hash == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_decision_content_hash_changes_with_the_text():
    assert (
        resolve_span("aaa", "aa", 1).decision_content_hash
        != resolve_span("aaab", "aa", 1).decision_content_hash
    )


def test_overlapping_pattern_counts_only_non_overlapping_matches():
    assert find_exact_matches("aaa", "aa") == [(0, 2)]
    assert find_exact_matches("aaaa", "aa") == [(0, 2), (2, 4)]
    assert find_exact_matches("ababab", "abab") == [(0, 4)]


def test_second_occurrence_of_overlapping_pattern_is_a_proposed_unique_repair():
    resolution = resolve_span("aaa", "aa", 2)

    assert resolution.status == "unique_exact_repair_proposed"
    assert resolution.span is None
    assert resolution.is_resolved is False
    assert resolution.all_matches == ((0, 2),)
    record = resolution.as_record()
    assert record["proposed_span"] == [0, 2]
    assert record["corrected_occurrence"] == 1
    assert record["repair_policy"] == "unique_exact_sidecar_v1"
    assert record["span"] is None
    assert record["decision_content_hash"] == digest(
        {key: value for key, value in record.items() if key != "decision_content_hash"}
    )


def test_out_of_range_occurrence_with_several_matches_is_ambiguous():
    resolution = resolve_span("aaaa", "aa", 3)

    assert resolution.as_record() == {
        "section_sha256": sha("aaaa"),
        "quote": "aa",
        "original_occurrence": 3,
        "all_matches": [[0, 2], [2, 4]],
        "match_policy": MATCH_POLICY,
        "span": None,
        "status": "ambiguous_occurrence",
        "decision_content_hash": resolution.decision_content_hash,
    }


def test_missing_quote_is_not_found():
    resolution = resolve_span("A block of mass m.", "Block", 1)

    assert resolution.status == "quote_not_found"
    assert resolution.all_matches == ()
    assert resolution.span is None
    assert "proposed_span" not in resolution.as_record()


def test_quote_in_empty_text_is_not_found():
    assert resolve_span("", "m", 1).status == "quote_not_found"


def test_chinese_offsets_are_code_points():
    first = resolve_span(ZH_STEM, "物块", 1)
    second = resolve_span(ZH_STEM, "物块", 2)

    assert first.span == (5, 7)
    assert second.span == (19, 21)
    assert second.all_matches == ((5, 7), (19, 21))
    assert ZH_STEM[19:21] == "物块"
    assert resolve_span(ZH_STEM, "θ", 1).span == (13, 14)


def test_non_bmp_character_counts_as_one_code_point():
    text = "质量𝑚的物块，𝑚=2kg"

    assert resolve_span(text, "物块", 1).span == (4, 6)
    assert resolve_span(text, "𝑚", 2).span == (7, 8)
    assert resolve_span(text, "𝑚=2kg", 1).span == (7, 12)
    # The same text in UTF-16 units would put 物块 at 5: a browser must convert (Kit §2.6).
    assert len(text[:4].encode("utf-16-le")) // 2 == 5


def test_no_unicode_normalization_is_applied():
    decomposed = "cafe\u0301"

    assert resolve_span(decomposed, "caf\u00e9", 1).status == "quote_not_found"
    assert resolve_span(decomposed, "e\u0301", 1).span == (3, 5)


def test_crlf_is_matched_literally():
    text = "line one\r\nline two"

    assert resolve_span(text, "\r\nline", 1).span == (8, 14)
    assert resolve_span(text, "\nline", 1).span == (9, 14)


@pytest.mark.parametrize(
    ("text", "quote", "occurrence", "code"),
    [
        ("abc", "", 1, "SPAN_QUOTE_EMPTY"),
        ("abc", None, 1, "SPAN_QUOTE_EMPTY"),
        ("abc", "a", 0, "SPAN_OCCURRENCE_INVALID"),
        ("abc", "a", -1, "SPAN_OCCURRENCE_INVALID"),
        ("abc", "a", True, "SPAN_OCCURRENCE_INVALID"),
        ("abc", "a", 1.0, "SPAN_OCCURRENCE_INVALID"),
        ("abc", "a", "1", "SPAN_OCCURRENCE_INVALID"),
        (None, "a", 1, "SPAN_TEXT_INVALID"),
    ],
)
def test_structural_errors_raise_a_value_error(text, quote, occurrence, code):
    with pytest.raises(SpanStructuralError) as raised:
        resolve_span(text, quote, occurrence)

    assert isinstance(raised.value, ValueError)
    assert raised.value.code == code


def test_apply_unique_exact_repair_resolves_the_only_match():
    proposed = resolve_span("A block of mass m.", "block", 2)

    repaired = apply_unique_exact_repair(proposed)

    assert isinstance(repaired, SpanResolution)
    record = repaired.as_record()
    hash_free = {key: value for key, value in record.items() if key != "decision_content_hash"}
    assert hash_free == {
        "section_sha256": sha("A block of mass m."),
        "quote": "block",
        "original_occurrence": 2,
        "all_matches": [[2, 7]],
        "match_policy": "literal_nonoverlap_1based_v1",
        "span": [2, 7],
        "status": "repaired_unique_exact",
        "proposed_span": [2, 7],
        "corrected_occurrence": 1,
        "repair_policy": "unique_exact_sidecar_v1",
    }
    assert record["decision_content_hash"] == digest(hash_free)
    assert repaired.decision_content_hash != proposed.decision_content_hash
    assert proposed.status == "unique_exact_repair_proposed"  # the input is not mutated


def test_apply_unique_exact_repair_accepts_and_returns_a_record_dict():
    proposed = resolve_span("aaa", "aa", 2)

    repaired = apply_unique_exact_repair(proposed.as_record())

    assert repaired == apply_unique_exact_repair(proposed).as_record()
    assert repaired["status"] == "repaired_unique_exact"
    assert repaired["span"] == [0, 2]


@pytest.mark.parametrize(
    ("text", "quote", "occurrence"),
    [("aaa", "aa", 1), ("aaaa", "aa", 3), ("abc", "x", 1)],
)
def test_apply_unique_exact_repair_refuses_other_statuses(text, quote, occurrence):
    with pytest.raises(SpanStructuralError) as raised:
        apply_unique_exact_repair(resolve_span(text, quote, occurrence))

    assert raised.value.code == "SPAN_REPAIR_NOT_APPLICABLE"


def test_apply_unique_exact_repair_refuses_a_malformed_record():
    with pytest.raises(SpanStructuralError) as raised:
        apply_unique_exact_repair({"status": "unique_exact_repair_proposed"})

    assert raised.value.code == "SPAN_REPAIR_NOT_APPLICABLE"
