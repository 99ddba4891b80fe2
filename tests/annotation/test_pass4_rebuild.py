"""'Rebuild from Passes 1–3' recomputes Pass 4's issues (issue 28 item 4): the rebuilt document, saved as the
workspace saves it, comes back from the pass API with its own issues, and the page shows the same."""

from __future__ import annotations

import copy
import json
import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.demo.generator import generate_problem
from annotation.models import PassDocument
from annotation.services import pass_document_save
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db

# static/js/workspace/pass4.js CONSOLIDATED_KEYS: what the rebuild takes from payload.consolidated
CONSOLIDATED_KEYS = (
    "visual_nodes",
    "physical_nodes",
    "text_mentions",
    "quantities",
    "bindings",
    "constraints",
    "query_target",
)


def _payload(client: Client, url: str) -> dict:
    html = client.get(url).content.decode()
    match = re.search(r'<script id="ws-payload" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))


def test_the_rebuilt_pass_4_has_the_issues_of_the_rebuilt_document_on_the_api_and_the_page(
    annotator, source_reviewer
):
    gen = generate_problem(seed=2027, index=3)
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(problem_id=gen.problem_id, stem=segments["stem"], query=segments["query"])
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    for pass_no, document in enumerate(gen.passes[:3], start=1):
        PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(document),
            approved_by=source_reviewer,
        )
    stale = copy.deepcopy(gen.passes[3])
    stale["query_target"] = {**stale["query_target"], "mention_id": ""}  # saved before Pass 3 named it
    stale["quantities"] = stale["quantities"][:1]
    saved = pass_document_save(
        parent=parent, pass_no=4, document=stale, actor=annotator, expected_version=None
    )
    client = Client()
    client.force_login(annotator)
    url = f"/problems/{parent.problem_id}/passes/4/"

    before = _payload(client, url)
    assert "QUERY_TARGET_MISSING" in [i["code"] for i in before["issues"]]

    rebuilt = copy.deepcopy(before["document"])
    for key in CONSOLIDATED_KEYS:
        rebuilt[key] = before["consolidated"][key]
    api = APIClient()
    api.force_authenticate(annotator)
    response = api.put(
        f"/api/parents/{parent.problem_id}/passes/4/",
        {"document": rebuilt},
        format="json",
        HTTP_IF_MATCH=f'"{saved.version}"',
    )
    assert response.status_code == 200
    assert response.json()["validation_errors"] == []
    assert response.json()["document"]["query_target"] == gen.passes[2]["query_target"]

    after = _payload(client, url)
    assert after["issues"] == []
    assert all(after["document"][key] == after["consolidated"][key] for key in CONSOLIDATED_KEYS)
    assert api.get(f"/api/parents/{parent.problem_id}/passes/4/").json()["validation_errors"] == []
