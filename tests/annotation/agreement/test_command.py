"""``manage.py agreement``: the summary as lines or as the API's JSON."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.annotation.agreement.world import build

pytestmark = pytest.mark.django_db


def test_lines_and_json(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=2)
    out = StringIO()
    call_command("agreement", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "Agreement, every sample, IoU threshold 0.5: 6 pair-passes"
    n = len(world.first_docs["agr_0"][1]["visual_nodes"])
    assert lines[1].startswith(
        f"alice / bob, Pass 1, 1 parents (1 submitted): regions P 1.000 R {(n - 1) / n:.3f}"
    )
    out = StringIO()
    call_command("agreement", "--sample", str(world.sample.pk), "--json", stdout=out)
    client.force_login(admin_user_role)
    assert json.loads(out.getvalue()) == client.get("/api/agreement/", {"sample": world.sample.pk}).json()


def test_refusals():
    with pytest.raises(CommandError, match="No double-annotation sample 5"):
        call_command("agreement", "--sample", "5")
    with pytest.raises(CommandError, match="threshold"):
        call_command("agreement", "--threshold", "0")
