"""Drafts are shared like the pass documents they pre-fill (issue 25 item 9): any annotator of the project may
accept or discard any draft, and who did it is in the audit log; a user without the annotator role may not."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from annotation.drafting.services import draft_execute, draft_run_create
from annotation.models import LLMDraft
from audit.models import Event
from models_registry.models import ModelConfig
from tests.annotation.test_drafting import NODE
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, ProblemImageFactory, png_bytes


@pytest.fixture
def draft(db, django_user_model) -> LLMDraft:
    parent = ParentProblemFactory()
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=png_bytes(300, 200, (250, 250, 250)))
    config = ModelConfig.objects.create(
        name="script",
        provider="scripted",
        model="s",
        extra={
            "default": json.dumps(
                {"problem_id": parent.problem_id, "visual_nodes": [NODE], "ambiguities": []}
            )
        },
    )
    owner = make_user(django_user_model, "ann_owner", "annotator")
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=owner, dispatch=False)
    return draft_execute(draft_id=run.drafts.get().pk)


@pytest.mark.django_db
def test_another_annotator_discards_a_draft_and_the_log_names_them(draft, django_user_model):
    assert draft.status == LLMDraft.Status.READY
    outsider = make_user(django_user_model, "no_role_user")
    reviewer = make_user(django_user_model, "prb", "probe_reviewer")
    for user in (outsider, reviewer):
        client = APIClient()
        client.force_login(user)
        assert client.post(f"/api/drafts/{draft.pk}/discard/").status_code == 403
    draft.refresh_from_db()
    assert draft.status == LLMDraft.Status.READY
    colleague = make_user(django_user_model, "ann_colleague", "annotator")
    client = APIClient()
    client.force_login(colleague)
    answer = client.post(f"/api/drafts/{draft.pk}/discard/")
    assert answer.status_code == 200 and answer.json()["status"] == "discarded"
    event = Event.objects.get(verb="llm_draft.discard", object_id=str(draft.pk))
    assert event.actor == colleague and event.before == {"status": "ready"}
