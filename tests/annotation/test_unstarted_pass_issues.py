"""An unstarted Pass 4 is shown consolidated from Passes 1–3, and its issues are that document's: a query
target Pass 3 has is not "missing" there."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command

from annotation.models import PassDocument

pytestmark = pytest.mark.django_db


def _payload(html: str) -> dict:
    match = re.search(r'<script id="ws-payload" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))


def test_an_unstarted_pass_4_has_the_issues_of_what_it_is_built_from(client, role_users, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    call_command("load_demo", "--count", "3", "--seed", "2027", "--no-users", stdout=io.StringIO())
    four = (
        PassDocument.objects.filter(pass_no=4).select_related("parent").order_by("parent__problem_id").first()
    )
    parent = four.parent
    three = PassDocument.objects.get(parent=parent, pass_no=3)
    assert three.document["query_target"]["mention_id"]  # Pass 3 names its query target
    four.delete()
    client.force_login(role_users["annotator"])

    payload = _payload(client.get(f"/problems/{parent.problem_id}/passes/4/").content.decode())

    assert payload["state"]["exists"] is False
    assert payload["consolidated"]["query_target"] == three.document["query_target"]
    codes = [issue["code"] for issue in payload["issues"]]
    assert "QUERY_TARGET_MISSING" not in codes
    assert codes == []  # the demo's Passes 1–3 consolidate into a valid Pass 4
    assert not PassDocument.objects.filter(parent=parent, pass_no=4).exists()  # opening wrote nothing
