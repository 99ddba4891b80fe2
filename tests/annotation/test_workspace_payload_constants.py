"""The workspace front end takes record ID prefixes and relation predicates from the page payload, which
takes them from the validator (Python is the one source of truth); the JS modules hard-code neither."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.workspace_page import RELATION_PREDICATES
from kit.passes.validator import ID_PREFIXES
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

WORKSPACE_JS = Path(__file__).resolve().parents[2] / "static/js/workspace"
# fmt: off
COLLECTION_PREFIXES = {
    "visual_nodes": "v", "physical_nodes": "p", "new_or_updated_physical_nodes": "p", "text_mentions": "m",
    "quantities": "q", "bindings": "b", "relations": "r", "constraints": "c", "ambiguities": "u",
    "solution_steps": "s",
}
# fmt: on


def _page_payload(user, url: str) -> dict:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    match = re.search(
        r'<script id="ws-payload" type="application/json">(.*?)</script>', response.content.decode(), re.S
    )
    assert match, "the page embeds no ws-payload"
    return json.loads(match.group(1))


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["pass_workspace", "pass_review"])
def test_the_page_payload_carries_the_validators_id_prefixes_and_the_relation_predicates(page, role_users):
    parent = ParentProblemFactory(problem_id="ws_consts")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    PassDocumentFactory(parent=parent, pass_no=1)
    payload = _page_payload(role_users["admin"], reverse(f"annotation:{page}", args=[parent.problem_id, 1]))
    assert payload["id_prefixes"] == ID_PREFIXES
    assert payload["collection_id_prefixes"] == COLLECTION_PREFIXES
    assert payload["relation_predicates"] == list(RELATION_PREDICATES)


def test_the_workspace_modules_hard_code_no_predicate_and_no_id_prefix():
    sources = {path.name: path.read_text(encoding="utf-8") for path in WORKSPACE_JS.glob("*.js")}
    assert "workspace.js" in sources and len(sources) > 10
    for name, text in sources.items():
        for predicate in RELATION_PREDICATES:
            assert f'"{predicate}"' not in text, (name, predicate)
        # A prefix literal would show up as an ID built or tested from a one-letter string.
        assert not re.search(r'pad\("[a-z]"|\[0\] === "[a-z]"|`[a-z]9?\$\{', text), name
