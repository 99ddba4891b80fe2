"""The analytics page and its CSV downloads over HTTP: admins only, the period form, the exact CSV content, the
charts' data, and a query count that stays flat at 10× the data."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.annotation.analytics.world import build

pytestmark = pytest.mark.django_db

PAGE = "/analytics/annotation/"
DAY = {"from": "2026-11-10", "to": "2026-11-10"}
FIGURE_HEADER = (
    "documents,saves,active_seconds,submissions,rejections,drafts_accepted,drafts_edited,drafts_discarded,"
    "draft_acceptance_rate,draft_edit_rate,ocr_accepted,ocr_edited,ocr_dropped,ocr_acceptance_rate,ocr_edit_rate,"
    "checked_documents,physics_findings,findings_per_document"
)


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"])
@pytest.mark.parametrize("url", [PAGE, f"{PAGE}annotators.csv", f"{PAGE}rejections.csv"])
def test_only_admins_may_open_the_page_or_its_csv(client, role_users, django_user_model, role, url):
    build(django_user_model)
    client.force_login(role_users[role])
    response = client.get(url, DAY)
    assert response.status_code == 403
    assert b"alice0" not in response.content and b"bob0" not in response.content


def test_an_annotator_cannot_see_another_annotators_figures(client, django_user_model):
    world = build(django_user_model)[0]
    client.force_login(world.alice)
    for url in (PAGE, f"{PAGE}annotators.csv", f"{PAGE}annotator_totals.csv"):
        response = client.get(url, DAY)
        assert response.status_code == 403 and b"bob0" not in response.content


@pytest.mark.parametrize("url", [PAGE, f"{PAGE}annotators.csv"])
def test_anonymous_visitors_go_to_the_login_page(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_the_admin_sees_every_table_and_the_rule(client, admin_user_role, django_user_model):
    build(django_user_model)
    client.force_login(admin_user_role)
    response = client.get(PAGE, DAY)
    assert response.status_code == 200
    html = response.content.decode()
    for table in ("annotators", "annotator_totals", "sources", "domains", "rejections"):
        assert f'id="table-{table}"' in html
        assert f'href="/analytics/annotation/{table}.csv?from=2026-11-10&amp;to=2026-11-10"' in html
    assert "at most 5 minutes (300 s)" in html and "the first save of a session counts 0" in html
    assert '<td class="num">0:07:30</td>' in html  # alice, pass 1: 450 s
    assert "75.0%" in html and "33.3%" in html  # her OCR acceptance and edit rates
    chart = json.loads(
        re.search(r'<script id="analytics-chart-data" type="application/json">(.*?)</script>', html).group(1)
    )
    assert chart["annotators"] == ["alice0", "bob0"]
    assert chart["active_hours"] == [
        {"label": "Pass 1", "values": [0.125, 0.083]},
        {"label": "Pass 3", "values": [0.05, 0.0]},
    ]
    assert (chart["submissions"], chart["rejections"]) == ([2, 1], [1, 0])
    assert chart["rates"][0] == {"label": "Draft acceptance", "values": [100.0, 0.0]}
    assert chart["rates"][3] == {"label": "OCR edit rate", "values": [33.3, None]}
    assert (chart["sources"], chart["source_findings"]) == (["Generated-0", "OpenStax-0"], [0.0, 2.0])


def test_without_a_period_the_page_shows_the_last_30_days(client, admin_user_role):
    client.force_login(admin_user_role)
    response = client.get(PAGE)
    assert response.status_code == 200
    period = response.context["data"].period
    assert (period.last_day - period.first_day).days == 29
    assert 'id="analytics-empty"' in response.content.decode()


def test_a_reversed_or_malformed_period_is_refused_with_the_reason(client, admin_user_role):
    client.force_login(admin_user_role)
    response = client.get(PAGE, {"from": "2026-11-12", "to": "2026-11-10"})
    assert response.status_code == 400
    assert "The period&#x27;s first day comes after its last day." in response.content.decode()
    assert "data" not in response.context
    response = client.get(f"{PAGE}sources.csv", {"from": "12/31/x", "to": ""})
    assert response.status_code == 400 and response.content.decode() == "Bad period: Enter a valid date.\n"
    assert client.get(f"{PAGE}nonsense.csv", DAY).status_code == 404


def test_the_annotator_table_as_csv(client, admin_user_role, django_user_model):
    build(django_user_model)
    client.force_login(admin_user_role)
    response = client.get(f"{PAGE}annotators.csv", DAY)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert (
        response["Content-Disposition"]
        == 'attachment; filename="annotation-annotators-2026-11-10_2026-11-10.csv"'
    )
    assert response.content.decode() == (
        f"annotator,pass,{FIGURE_HEADER}\r\n"
        "alice0,1,1,5,450,1,1,1,0,0,1.0000,0.0000,2,1,1,0.7500,0.3333,1,2,2.0000\r\n"
        "alice0,3,1,1,180,1,0,1,1,0,1.0000,1.0000,0,0,0,,,0,0,\r\n"
        "bob0,1,1,3,300,1,0,0,0,1,0.0000,,0,0,1,0.0000,,1,0,0.0000\r\n"
    )


def test_the_source_domain_and_rejection_tables_as_csv(client, admin_user_role, django_user_model):
    world = build(django_user_model)[0]
    client.force_login(admin_user_role)
    generated = "1,3,300,1,0,0,0,1,0.0000,,0,0,1,0.0000,,1,0,0.0000"
    openstax = "2,6,630,2,1,2,1,0,1.0000,0.5000,2,1,1,0.7500,0.3333,1,2,2.0000"
    assert client.get(f"{PAGE}sources.csv", DAY).content.decode() == (
        f"source,{FIGURE_HEADER}\r\nGenerated-0,{generated}\r\nOpenStax-0,{openstax}\r\n"
    )
    assert client.get(f"{PAGE}domains.csv", DAY).content.decode() == (
        f"domain,{FIGURE_HEADER}\r\n(no domain),{generated}\r\nmechanics,{openstax}\r\n"
    )
    # the note starts with "-": a spreadsheet would run it as a formula, so it is quoted with '
    assert client.get(f"{PAGE}rejections.csv", {"from": "", "to": ""}).content.decode() == (
        "rejected_at,problem_id,pass,source,domain,annotator,reviewer,note,record_comments\r\n"
        f"2026-11-10 09:40:00,{world.d1.parent.problem_id},1,OpenStax-0,mechanics,alice0,rita0,"
        "'-ve sign on the normal force; =fix the unit,quantities:q001: 5 m is a length\r\n"
    )
    response = client.get(f"{PAGE}rejections.csv", {"from": "", "to": ""})
    assert response["Content-Disposition"] == 'attachment; filename="annotation-rejections-all-time.csv"'


def _page_queries(client, admin, django_user_model, copies: int) -> int:
    build(django_user_model, copies)
    client.force_login(admin)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(PAGE, DAY)
    assert response.status_code == 200 and response.content.decode().count("<tr>") > 3 * copies
    return len(captured)


@pytest.mark.parametrize("copies", [1, 10])
def test_the_page_is_flat_in_queries_at_ten_times_the_data(
    client, admin_user_role, django_user_model, copies
):
    assert _page_queries(client, admin_user_role, django_user_model, copies) == PAGE_QUERIES


PAGE_QUERIES = 13  # session, user, roles; the 8 of the figures; the user's and groups' permissions (the menu)


@pytest.mark.parametrize(
    "value", ["²٣", "２０２６-11-10", "9999-12-31", "0001-01-01", "x" * 5000, "2026-02-30"]
)
def test_hostile_dates_are_a_clear_answer_never_a_server_error(client, admin_user_role, value):
    client.force_login(admin_user_role)
    for url in (PAGE, f"{PAGE}annotators.csv", "/api/annotation-analytics/"):
        assert client.get(url, {"from": value, "to": value}).status_code in (200, 400), (url, value)
