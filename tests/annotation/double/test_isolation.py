"""The second annotator never sees the first annotation: every URL that names the problem (or one of its LLM
drafts), found by walking the URL conf, refuses them — by session and by API token — and no page or API they can
open anywhere else shows the first annotation's text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import LLMDraft
from tests.annotation.double.conftest import FIRST_SECRET

pytestmark = pytest.mark.django_db

OPEN = {"annotation:image_file"}  # the images both annotators annotate


def _patterns(resolver: URLResolver, prefix: str = "", namespace: str = "") -> list[tuple[str, str]]:
    found = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += _patterns(entry, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern):
            found.append((prefix + str(entry.pattern), f"{namespace}{entry.name}"))
    return found


def _fill(route: str, values: dict[str, str]) -> str | None:
    def value(match: re.Match[str]) -> str:
        return values[match.group(2)]

    try:
        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)
    except KeyError:
        return None


def first_annotation_urls(problem_id: str, draft_id: int) -> list[tuple[str, str]]:
    """Every route naming a problem or a draft (but the images and the second annotator's own), filled in."""
    values = {
        "problem_id": problem_id,
        "pass_no": "1",
        "draft_id": str(draft_id),
        "version": "1",
        "image_id": "img_1",
    }
    urls = []
    for route, name in _patterns(get_resolver()):
        if name in OPEN or name.startswith(("double:", "double-api:")):
            continue
        if "<str:problem_id>" not in route and "<int:draft_id>" not in route:
            continue
        url = _fill(route, values)
        if url is not None:
            urls.append((name, url))
    return urls


@pytest.fixture
def draft(double) -> LLMDraft:
    return LLMDraft.objects.create(
        parent=double["parents"][0], pass_no=1, model_label="m", prompt_version="v", raw_output=FIRST_SECRET
    )


def _clients(user: Any) -> list[tuple[str, APIClient]]:
    session = APIClient()
    session.force_login(user)
    token = APIClient()
    token.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return [("session", session), ("token", token)]


def test_every_url_of_the_first_annotation_refuses_the_second_annotator(double, draft):
    urls = first_annotation_urls("dbl_a", draft.pk)
    names = {name for name, _ in urls}
    # the walk finds the workspace, review, history, drafts, OCR and the pass API (it cannot miss a new one)
    for expected in (
        "annotation:pass_workspace",
        "annotation:pass_review",
        "annotation:pass_history",
        "annotation-api:pass-detail",
        "annotation-api:pass-version-list",
        "annotation-api:pass-diff",
        "drafts:review",
        "drafts_api:draft_detail",
        "ocr:proposal-list",
    ):
        assert expected in names
    assert len(urls) >= 20
    refused = []
    for how, client in _clients(double["second"]):
        for name, url in urls:
            for method in ("get", "post", "put"):
                if how == "token" and not url.startswith("/api/"):
                    continue
                response = getattr(client, method)(url, data={}, format="json")
                body = response.content.decode("utf-8", "replace")
                assert FIRST_SECRET not in body, f"{how} {method} {url} shows the first annotation"
                if name == "annotation:problem_detail":
                    assert (
                        response.status_code == 302 and response["Location"] == "/problems/dbl_a/independent/"
                    )
                    continue
                if response.status_code == 405:
                    continue
                assert response.status_code == 403, f"{how} {method} {name} {url}: {response.status_code}"
                refused.append((how, method, url))
    assert len(refused) > 40


def test_the_first_annotator_and_a_reviewer_still_see_it(double, draft):
    for user in (double["first"], double["reviewer"]):
        client = APIClient()
        client.force_login(user)
        response = client.get("/api/parents/dbl_a/passes/1/")
        assert response.status_code == 200 and FIRST_SECRET in response.content.decode()


def test_a_problem_not_double_annotated_stays_open_to_the_second_annotator(double):
    from tests.factories import ParentProblemFactory

    ParentProblemFactory(problem_id="plain_1", source=double["source"])
    client = APIClient()
    client.force_login(double["second"])
    assert client.get("/problems/plain_1/").status_code == 200
    assert client.get("/api/parents/plain_1/passes/").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/problems/",
        "/problems/?q=dbl",
        "/source-review/",
        "/drafts/",
        "/independent/",
        "/problems/dbl_a/independent/passes/1/",
        "/problems/dbl_a/independent/passes/2/",
        "/api/parents/",
        "/api/parents/?source=double-src",
        "/api/parents/dbl_a/",
    ],
)
def test_no_page_the_second_annotator_opens_shows_the_first_annotation(double, draft, url):
    client = APIClient()
    client.force_login(double["second"])
    response = client.get(url)
    assert response.status_code in (200, 403), (url, response.status_code)
    body = response.content.decode("utf-8", "replace")
    assert FIRST_SECRET not in body
    assert "first_ann" not in body  # not even who made it


def test_the_second_annotators_workspace_is_their_own(double):
    client = APIClient()
    client.force_login(double["second"])
    page = client.get("/problems/dbl_a/independent/passes/1/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "independent second annotation" in text
    assert "/api/parents/dbl_a/independent/passes/1/" in text
    assert "/history/" not in text and "Propose text (OCR)" not in text
    # another annotator cannot open it, an admin reads it
    other = APIClient()
    other.force_login(double["other"])
    assert other.get("/problems/dbl_a/independent/passes/1/").status_code == 403
    admin = APIClient()
    admin.force_login(double["admin"])
    assert admin.get("/problems/dbl_a/independent/passes/1/").status_code == 200


def test_the_problem_list_hides_the_first_annotations_state(double):
    client = APIClient()
    client.force_login(double["second"])
    text = client.get("/problems/?q=dbl_a").content.decode()
    assert "Your independent annotation" in text
    assert "Pass 1: draft" not in text and "/problems/dbl_a/passes/1/" not in text
    assert "/problems/dbl_a/independent/passes/1/" in text
    first = APIClient()
    first.force_login(double["first"])
    assert "Pass 1: draft" in first.get("/problems/?q=dbl_a").content.decode()


def test_a_second_annotator_who_also_reviews_never_gets_the_problem_in_the_review_queue(
    double, django_user_model
):
    from django.contrib.auth.models import Group

    from annotation.services import pass_document_submit

    doc = double["doc"]
    pass_document_submit(doc=doc, actor=double["first"])
    double["second"].groups.add(Group.objects.get(name="source_reviewer"))
    second = APIClient()
    second.force_login(double["second"])
    assert "dbl_a" not in second.get("/source-review/").content.decode()
    assert second.post("/api/parents/dbl_a/passes/1/approve/", {}, format="json").status_code == 403
    reviewer = APIClient()
    reviewer.force_login(double["reviewer"])
    assert "dbl_a" in reviewer.get("/source-review/").content.decode()


def test_the_problem_page_offers_curators_the_curation_of_each_pass_the_second_annotator_did(double):
    from annotation.double.services import independent_save
    from annotation.models import SecondAnnotation

    second = SecondAnnotation.objects.get(parent__problem_id="dbl_a")
    independent_save(
        second=second,
        pass_no=1,
        document={"problem_id": "dbl_a", "visual_nodes": [], "ambiguities": []},
        actor=double["second"],
        expected_version=None,
    )
    reviewer = APIClient()
    reviewer.force_login(double["reviewer"])
    text = reviewer.get("/problems/dbl_a/").content.decode()
    assert "second_ann annotates this problem a second time" in text
    assert 'href="/problems/dbl_a/passes/1/curate/"' in text
    assert "/problems/dbl_a/passes/2/curate/" not in text  # no second document of Pass 2 yet
    first = APIClient()
    first.force_login(double["first"])  # an annotator is no curator
    assert "curate" not in first.get("/problems/dbl_a/").content.decode()
