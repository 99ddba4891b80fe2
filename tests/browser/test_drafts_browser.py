"""Browser: draft a pass with the offline model, review it against the current document, accept per record."""

from __future__ import annotations

import json

from annotation.models import LLMDraft, PassDocument
from models_registry.models import ModelConfig
from tests.browser.conftest import incline_diagram, screenshot
from tests.browser.test_pages_browser import login
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

NODE = {
    "id": "v001",
    "type": "text_glyph",
    "subtype": "",
    "text": "A",
    "image_id": "img_0",
    "bbox_1000": [500, 450, 540, 520],
    "keypoints_1000": [],
    "center_1000": [-1, -1],
    "radius_1000": -1,
    "confidence": "high",
}


def test_draft_review_accept_per_record(page, live_server, make_browser_user, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("ann", "annotator")
    make_browser_user("boss", "admin")
    parent = ParentProblemFactory(problem_id="incline-1")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=incline_diagram())
    PassDocumentFactory(
        parent=parent,
        pass_no=1,
        document={"problem_id": "incline-1", "visual_nodes": [NODE], "ambiguities": []},
    )
    drafted = {
        "problem_id": "incline-1",
        "ambiguities": [],
        "visual_nodes": [
            {**NODE, "text": "A", "confidence": "medium"},
            {**NODE, "id": "v002", "text": "30°", "bbox_1000": [180, 720, 260, 790]},
            {**NODE, "id": "v003", "text": "mg", "bbox_1000": [540, 740, 600, 800]},
        ],
    }
    ModelConfig.objects.create(
        name="scripted-drafter", provider="scripted", model="script", extra={"default": json.dumps(drafted)}
    )

    login(page, live_server, "ann", "/problems/incline-1/passes/1/drafts/")
    page.get_by_role("button", name="Draft Pass 1").click()
    page.wait_for_selector("text=Drafting Pass 1 with scripted-drafter")
    card = page.locator(".draft-card").first
    card.get_by_text("Ready", exact=True).wait_for()
    screenshot(page, "h4-draft-review")
    card.get_by_label("Accept visual_nodes/v002").check()
    card.get_by_label("Accept visual_nodes/v003").check()
    card.get_by_role("button", name="Accept ticked records").click()
    page.wait_for_selector("text=Accepted draft")
    screenshot(page, "h4-draft-accepted")
    doc = PassDocument.objects.get(parent=parent, pass_no=1)
    assert [n["text"] for n in doc.document["visual_nodes"]] == ["A", "30°", "mg"]
    assert doc.document["visual_nodes"][0]["confidence"] == "high"  # the human's v001 was kept
    draft = LLMDraft.objects.get()
    assert draft.status == "accepted" and draft.acceptance["changed"] == 1

    page.goto(f"{live_server.url}/drafts/")
    page.get_by_role("link", name=f"#{draft.run_id}").click()
    page.get_by_text("1 / 1").wait_for()
    screenshot(page, "h4-draft-run")

    page.context.clear_cookies()
    login(page, live_server, "boss", "/models/")
    page.get_by_role("cell", name="scripted-drafter").wait_for()
    screenshot(page, "h4-models")
