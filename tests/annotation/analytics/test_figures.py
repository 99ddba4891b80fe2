"""The pure arithmetic of annotation analytics: active time from save timestamps, rates, CSV cells."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from annotation.analytics.figures import (
    ACTIVE_GAP_LIMIT_S,
    Tally,
    credited_seconds,
    csv_value,
    duration_label,
    figure_values,
)

T = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def s(seconds: float) -> datetime:
    return T + timedelta(seconds=seconds)


def test_each_save_adds_the_gap_to_the_same_users_previous_save_up_to_five_minutes():
    saves = [
        ("a", s(0)),
        ("a", s(120)),
        ("a", s(420)),
        ("a", s(721)),
        ("a", s(730)),
        ("b", s(100)),
        ("b", s(160)),
    ]
    # a: first 0, +120, +300 (exactly 5 min counts), 301 s is a break → 0, +9; b starts over: 0, +60
    assert list(credited_seconds(saves)) == [0.0, 120.0, 300.0, 0.0, 9.0, 0.0, 60.0]
    assert ACTIVE_GAP_LIMIT_S == 300


def test_unsorted_saves_are_refused():
    with pytest.raises(ValueError, match="sorted by user, then by time"):
        list(credited_seconds([("a", s(60)), ("a", s(0))]))


def test_rates_are_none_when_there_is_nothing_to_divide():
    tally = Tally()
    assert (tally.draft_acceptance_rate, tally.draft_edit_rate, tally.ocr_acceptance_rate) == (
        None,
        None,
        None,
    )
    assert tally.findings_per_document is None and tally.is_empty
    tally.add_draft(accepted=True, edited=True)
    tally.add_draft(accepted=True, edited=False)
    tally.add_draft(accepted=False, edited=False)
    tally.add_ocr("accepted", 3)
    tally.add_ocr("edited", 1)
    tally.add_ocr("dropped", 4)
    assert tally.draft_acceptance_rate == pytest.approx(2 / 3) and tally.draft_edit_rate == 0.5
    assert tally.ocr_acceptance_rate == 0.5 and tally.ocr_edit_rate == 0.25
    with pytest.raises(ValueError, match="neither accepted, edited nor dropped"):
        tally.add_ocr("proposed", 1)


def test_a_document_counts_once_and_its_findings_once_when_tallies_merge():
    one, other = Tally(), Tally()
    one.add_save(7, 30.0, 2)
    one.add_save(7, 40.0, 2)
    other.add_save(7, 10.0, 2)
    other.add_save(8, 0.0, None)  # never checked: not in findings per document
    merged = one.merge(other)
    assert (merged.document_count, merged.saves, merged.active_seconds) == (2, 4, 80.0)
    assert (merged.checked_documents, merged.finding_count, merged.findings_per_document) == (1, 2, 2.0)
    assert figure_values(merged)[:3] == [2, 4, 80]


def test_csv_cells_cannot_run_as_spreadsheet_formulas():
    assert [csv_value(v) for v in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "plain", None, 3, 0.5, True)] == [
        "'=1+1",
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "'\tx",
        "plain",
        "",
        "3",
        "0.5000",
        "true",
    ]


def test_durations_read_as_hours_minutes_seconds():
    assert [duration_label(x) for x in (0, 59.6, 630, 3600 * 26 + 61)] == [
        "0:00:00",
        "0:01:00",
        "0:10:30",
        "26:01:01",
    ]
