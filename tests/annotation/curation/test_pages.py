"""The curation page and the page of an applied curation, as each role; the curated pass through the ordinary
source review."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from annotation.models import Curation, PassDocument, SourceReview
from audit.models import Event
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory

pytestmark = pytest.mark.django_db


def _url(world, pass_no=1):
    return f"/problems/{world['parent'].problem_id}/passes/{pass_no}/curate/"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _payload(html: str) -> dict:
    match = re.search(r'<script id="curation-payload" type="application/json">(.*?)</script>', html, re.S)
    assert match is not None
    return json.loads(match.group(1))


def _form(html: str) -> dict[str, str]:
    """The curation form's fields as the browser would post them (checked radios only)."""
    form = html[html.index('id="cur-form"') :]
    data = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    data.update(re.findall(r'<input type="radio" name="(keep-\d+)" value="(\w+)" checked', form))
    return data


def test_the_page_shows_both_sides_and_the_pairs(curation_world):
    w = curation_world
    response = _client(w["curator"]).get(_url(w))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('data-testid="curation-row"') == 11
    assert "9 matched (1 differs), 1 only in the first, 1 only in the second" in html
    assert "differs: bbox_1000" in html
    assert 'href="/static/css/curation.css"' in html
    payload = _payload(html)
    assert payload["images"] == [
        {
            "image_id": "img_0",
            "url": f"/problems/{w['parent'].problem_id}/images/img_0",
            "width": w["parent"].images.get().width,
            "height": w["parent"].images.get().height,
        }
    ]
    assert [n["id"] for n in payload["sides"]["first"]] == [f"v{i:03d}" for i in range(1, 11)]
    assert [n["id"] for n in payload["sides"]["second"]] == [f"v{i:03d}" for i in range(1, 11)]
    assert payload["rows"][9] == {"index": 9, "first": ["v010"], "second": ["v009"]}  # the wire
    assert payload["rows"][10] == {"index": 10, "first": [], "second": ["v010"]}  # the second's own region
    form = _form(html)
    assert form["expected_version"] == str(w["docs"][1].version)
    assert form["rows"] == "11"
    assert [form[f"keep-{i}"] for i in range(11)] == ["first"] * 10 + ["drop"]


def test_pass_2_draws_each_side_over_its_own_pass_1(curation_world):
    w = curation_world
    html = _client(w["admin"]).get(_url(w, 2)).content.decode()
    payload = _payload(html)
    assert payload["sides"]["second"][-1]["text"] == "I"  # the second's Pass 1 regions
    p004 = next(r for r in payload["rows"] if r["index"] == 3)
    assert p004 == {"index": 3, "first": ["v006", "v009"], "second": ["v006"]}


@pytest.mark.parametrize(
    "who, status",
    [("curator", 200), ("approver", 200), ("admin", 200), ("first", 403), ("second", 403)],
)
def test_who_may_open_the_page(curation_world, who, status):
    w = curation_world
    response = _client(w[who]).get(_url(w))
    assert response.status_code == status
    if status == 403:
        assert "Resistor R2" not in response.content.decode() and "R2" not in response.content.decode()


def test_the_second_annotator_is_refused_even_as_a_source_reviewer(curation_world, django_user_model):
    w = curation_world
    w["second"].groups.add(w["curator"].groups.get())
    second = django_user_model.objects.get(pk=w["second"].pk)
    for url in (_url(w), f"/api/parents/{w['parent'].problem_id}/passes/1/curation/"):
        response = _client(second).get(url)
        assert response.status_code == 403
        assert "R2" not in response.content.decode()


def test_the_last_editor_is_refused(curation_world, django_user_model):
    w = curation_world
    w["first"].groups.add(w["curator"].groups.get())
    response = _client(django_user_model.objects.get(pk=w["first"].pk)).get(_url(w))
    assert response.status_code == 403
    assert "You edited the first annotation of this pass last" in response.content.decode()


def test_anonymous_goes_to_the_login_page(curation_world):
    response = Client().get(_url(curation_world))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_a_parent_without_a_second_annotation_is_a_404_that_says_so(curation_world):
    w = curation_world
    parent = ParentProblemFactory(problem_id="cur_single")
    PassDocumentFactory(parent=parent, pass_no=1)
    response = _client(w["curator"]).get("/problems/cur_single/passes/1/curate/")
    assert response.status_code == 404
    assert (
        "cur_single has no second annotation: only the parents of a double-annotation sample can be curated."
        in response.content.decode()
    )
    assert _client(w["curator"]).get("/problems/nope/passes/1/curate/").status_code == 404
    assert _client(w["curator"]).get(_url(w, 5)).status_code == 404
    response = _client(w["curator"]).get(_url(w, 3))
    assert response.status_code == 404
    assert "The second annotator (cur_second) has no Pass 3 document" in response.content.decode()


def test_apply_from_the_page_then_a_source_reviewer_approves_the_curated_content(curation_world):
    w = curation_world
    curator = _client(w["curator"])
    form = _form(curator.get(_url(w)).content.decode())
    form["keep-0"] = "second"  # the battery as the second drew it
    response = curator.post(_url(w), form)
    curation = Curation.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/problems/{w['parent'].problem_id}/passes/1/curations/{curation.pk}/"
    page = curator.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert "Curated: saved as version 2 and submitted for source review." in html
    assert 'data-testid="curated-status">Submitted<' in html
    assert "1 of 11 records chosen other than the default" in html
    assert _payload(html)["sides"]["curated"][0]["bbox_1000"] == [135, 475, 200, 516]

    doc = PassDocument.objects.get(parent=w["parent"], pass_no=1)
    review_url = f"/problems/{w['parent'].problem_id}/passes/1/review/"
    decision = {
        "document_sha256": doc.document_sha256,
        "parent_content_sha256": w["parent"].content_sha256,
        "decision": "approve",
        "note": "curated",
    }
    refused = curator.post(review_url, decision)  # the curator saved this version: not their review
    assert refused.status_code == 403
    assert PassDocument.objects.get(pk=doc.pk).status == "submitted"

    approver = _client(w["approver"])
    assert approver.get(review_url).status_code == 200
    assert approver.post(review_url, decision).status_code == 302
    doc.refresh_from_db()
    assert doc.status == "approved"
    assert doc.approved_by == w["approver"]
    assert doc.approved_sha256 == curation.result_sha256 == doc.document_sha256
    assert doc.approval_is_fresh
    assert doc.document["visual_nodes"][0]["bbox_1000"] == [135, 475, 200, 516]
    review = SourceReview.objects.get(pass_document=doc)
    assert (review.decision, review.document_sha256) == ("approved", curation.result_sha256)
    assert Event.objects.filter(verb="pass_document.approve", actor=w["approver"]).count() == 1


def test_a_stale_form_is_a_409_with_the_reason_and_nothing_changes(curation_world):
    w = curation_world
    curator = _client(w["curator"])
    form = _form(curator.get(_url(w)).content.decode())
    form["expected_version"] = str(w["docs"][1].version - 1)
    form["keep-0"] = "second"
    response = curator.post(_url(w), form)
    assert response.status_code == 409
    html = response.content.decode()
    assert "The first annotation was saved after you loaded it; reload and choose again." in html
    assert 'name="keep-0" value="second" checked' in html  # the curator's choices stay on the page
    assert Curation.objects.count() == 0
    assert PassDocument.objects.get(pk=w["docs"][1].pk).version == w["docs"][1].version


def test_the_result_page_is_refused_to_the_second_annotator_and_annotators(curation_world, django_user_model):
    w = curation_world
    curator = _client(w["curator"])
    form = _form(curator.get(_url(w)).content.decode())
    location = curator.post(_url(w), form)["Location"]
    assert _client(w["admin"]).get(location).status_code == 200
    assert _client(w["approver"]).get(location).status_code == 200
    assert _client(w["first"]).get(location).status_code == 403
    assert _client(w["second"]).get(location).status_code == 403
    other = make_user(django_user_model, "cur_probe", "probe_reviewer")
    assert _client(other).get(location).status_code == 403
    assert _client(w["curator"]).get(location.replace("/1/curations/", "/2/curations/")).status_code == 404


def test_a_row_count_past_the_limit_is_a_400(curation_world):
    w = curation_world
    curator = _client(w["curator"])
    form = _form(curator.get(_url(w)).content.decode())
    form["rows"] = "2147483647"
    response = curator.post(_url(w), form)
    assert response.status_code == 400
    assert "rows must be at most 5000." in response.content.decode()
    assert Curation.objects.count() == 0
