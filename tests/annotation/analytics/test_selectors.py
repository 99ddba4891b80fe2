"""Annotation analytics on a small hand-checked history (tests/annotation/analytics/world.py): every figure of
every table, the period filter, and the number of queries at 1× and 10× the data."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.analytics.figures import figure_values
from annotation.analytics.selectors import Period, annotation_analytics
from tests.annotation.analytics.world import DAY, REJECTION_NOTE, build

pytestmark = pytest.mark.django_db

THE_DAY = Period(DAY, DAY)
# documents, saves, active s, submissions, rejections, drafts accepted/edited/discarded, draft acceptance/edit,
# OCR accepted/edited/dropped, OCR acceptance/edit, checked documents, findings, findings per document
ALICE_PASS1 = [1, 5, 450, 1, 1, 1, 0, 0, 1.0, 0.0, 2, 1, 1, 0.75, 1 / 3, 1, 2, 2.0]
ALICE_PASS3 = [1, 1, 180, 1, 0, 1, 1, 0, 1.0, 1.0, 0, 0, 0, None, None, 0, 0, None]
BOB_PASS1 = [1, 3, 300, 1, 0, 0, 0, 1, 0.0, None, 0, 0, 1, 0.0, None, 1, 0, 0.0]
OPENSTAX = [2, 6, 630, 2, 1, 2, 1, 0, 1.0, 0.5, 2, 1, 1, 0.75, 1 / 3, 1, 2, 2.0]
GENERATED = BOB_PASS1


def rows(data):
    return [[r.username, r.pass_no, *figure_values(r.tally)] for r in data.annotators]


def test_every_figure_per_annotator_and_pass_on_the_hand_checked_day(django_user_model):
    build(django_user_model)
    data = annotation_analytics(period=THE_DAY)
    assert rows(data) == [["alice0", 1, *ALICE_PASS1], ["alice0", 3, *ALICE_PASS3], ["bob0", 1, *BOB_PASS1]]
    assert [(g.name, figure_values(g.tally)) for g in data.annotator_totals] == [
        ("alice0", [2, 6, 630, 2, 1, 2, 1, 0, 1.0, 0.5, 2, 1, 1, 0.75, 1 / 3, 1, 2, 2.0]),
        ("bob0", BOB_PASS1),
    ]


def test_the_same_figures_per_source_and_per_domain(django_user_model):
    build(django_user_model)
    data = annotation_analytics(period=THE_DAY)
    assert [(g.name, figure_values(g.tally)) for g in data.sources] == [
        ("Generated-0", GENERATED),
        ("OpenStax-0", OPENSTAX),
    ]
    assert [(g.name, figure_values(g.tally)) for g in data.domains] == [
        ("(no domain)", GENERATED),
        ("mechanics", OPENSTAX),
    ]
    assert figure_values(data.total)[:5] == [3, 9, 930, 3, 1]


def test_a_rejection_is_listed_with_its_reason_for_the_annotator_who_submitted(django_user_model):
    world = build(django_user_model)[0]
    (rejection,) = annotation_analytics(period=THE_DAY).rejections
    assert rejection.at.isoformat() == "2026-11-10T09:40:00+00:00"
    assert (rejection.problem_id, rejection.pass_no, rejection.source, rejection.domain) == (
        world.d1.parent.problem_id,
        1,
        "OpenStax-0",
        "mechanics",
    )
    assert (rejection.annotator, rejection.reviewer, rejection.note) == ("alice0", "rita0", REJECTION_NOTE)
    assert rejection.comments == ["quantities:q001: 5 m is a length"]


def test_the_period_filter_keeps_only_what_happened_in_it(django_user_model):
    build(django_user_model)
    everything = annotation_analytics(period=Period(None, None))
    alice1, _, bob1 = everything.annotators
    # two more saves of alice on the next day, 4 minutes apart (the first after a break): +240 s
    assert (alice1.tally.saves, alice1.tally.active_seconds) == (7, 690)
    # bob's OCR proposal accepted the day before
    assert (bob1.tally.ocr_accepted, bob1.tally.ocr_dropped, bob1.tally.ocr_acceptance_rate) == (1, 1, 0.5)
    next_day = annotation_analytics(period=Period(date(2026, 11, 11), None))
    assert rows(next_day) == [
        ["alice0", 1, 1, 2, 240, 0, 0, 0, 0, 0, None, None, 0, 0, 0, None, None, 1, 2, 2.0]
    ]
    assert next_day.rejections == [] and [g.name for g in next_day.sources] == ["OpenStax-0"]
    before = annotation_analytics(period=Period(None, date(2026, 11, 9)))
    assert rows(before) == [["bob0", 1, 0, 0, 0, 0, 0, 0, 0, 0, None, None, 1, 0, 0, 1.0, 0.0, 0, 0, None]]
    assert annotation_analytics(period=Period(date(2026, 12, 1), date(2026, 12, 31))).total.is_empty


def test_the_default_period_is_the_last_30_days_today_included():
    period = Period.default(date(2026, 3, 30))
    assert (period.first_day, period.last_day) == (date(2026, 3, 1), date(2026, 3, 30))
    assert period.start.isoformat() == "2026-03-01T00:00:00+00:00"
    assert period.end.isoformat() == "2026-03-31T00:00:00+00:00"  # exclusive
    assert Period(None, None).label == "all time"


QUERIES = 8  # saves and submissions, their documents, draft decisions, their drafts, OCR, rejections, comments, users


@pytest.mark.parametrize("copies", [1, 10])
def test_the_query_count_does_not_grow_with_the_data(django_user_model, copies):
    build(django_user_model, copies)
    with CaptureQueriesContext(connection) as captured:
        data = annotation_analytics(period=THE_DAY)
    assert len(data.annotators) == 3 * copies and len(data.rejections) == copies
    assert len(captured) == QUERIES
