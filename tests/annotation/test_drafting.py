"""Drafting services: prompts are answer-blind, parse + validate into drafts, accept/discard."""

from __future__ import annotations

import json

import pytest

from annotation.drafting.services import (
    acceptance_stats,
    draft_accept,
    draft_discard,
    draft_execute,
    draft_request_build,
    draft_run_create,
    parse_output,
)
from annotation.models import DraftRun, LLMDraft, PassDocument, PassDocumentVersion
from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError, ConflictError
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, png_bytes

NODE = {
    "id": "v001",
    "type": "text_glyph",
    "subtype": "",
    "text": "m",
    "image_id": "img_0",
    "bbox_1000": [70, 200, 115, 280],
    "keypoints_1000": [],
    "center_1000": [-1, -1],
    "radius_1000": -1,
    "confidence": "high",
}


@pytest.fixture
def parent(db):
    parent = ParentProblemFactory(options=[{"id": "A", "text": "mg"}, {"id": "B", "text": "2mg"}])
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=png_bytes(300, 200, (250, 250, 250)))
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1, data=png_bytes(200, 100, (0, 0, 0)))
    return parent


def scripted(name: str = "script", **extra) -> ModelConfig:
    return ModelConfig.objects.create(name=name, provider="scripted", model="script-1", extra=extra)


def pass1(pid: str, *nodes: dict) -> dict:
    return {"problem_id": pid, "visual_nodes": list(nodes), "ambiguities": []}


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4])
def test_prompts_for_passes_1_to_4_never_contain_answer_or_solution(parent, pass_no):
    PassDocumentFactory(parent=parent, pass_no=1, document=pass1(parent.problem_id, NODE))
    request, version = draft_request_build(parent=parent, pass_no=pass_no)
    sent = request.system + request.user
    assert parent.answer not in sent and parent.solution not in sent
    assert parent.stem in request.user and parent.query in request.user and '"2mg"' in request.user
    assert [i.data[:4] for i in request.images] == [b"\x89PNG"] * 2 and len(request.images) == 2
    assert version == f"draft-p{pass_no}-v1"
    if pass_no > 1:
        assert "Pass 1: " + json.dumps(pass1(parent.problem_id, NODE), sort_keys=True) in request.user


def test_pass5_prompt_alone_includes_the_solution_but_not_the_answer(parent):
    request, _ = draft_request_build(parent=parent, pass_no=5)
    assert parent.solution in request.user and parent.answer not in request.user


def test_parse_output_accepts_fences_and_reports_errors():
    assert parse_output('```json\n{"a": 1}\n```') == ({"a": 1}, "")
    assert parse_output("[1]")[0] is None and "not an object" in parse_output("[1]")[1]
    assert parse_output("{nope")[1].startswith("The output is not valid JSON")


def test_execute_stores_ready_and_invalid_drafts_with_records(parent, django_capture_on_commit_callbacks):
    good = json.dumps(pass1(parent.problem_id, NODE))
    config = scripted(default=good)
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = draft_execute(draft_id=LLMDraft.objects.get(run=run).pk)
    assert draft.status == LLMDraft.Status.READY and draft.parsed_document["visual_nodes"][0]["text"] == "m"
    assert (
        draft.request_record["prompt_version"] == "draft-p1-v1" and len(draft.request_record["images"]) == 2
    )
    assert parent.solution not in json.dumps(draft.request_record)
    run.refresh_from_db()
    assert (run.done, run.failed, run.status) == (1, 0, DraftRun.Status.SUCCEEDED)
    assert draft_execute(draft_id=draft.pk).status == LLMDraft.Status.READY  # idempotent
    run.refresh_from_db()
    assert run.done == 1

    config.extra = {"default": json.dumps({**pass1(parent.problem_id), "solution": "x"})}
    config.save()
    run2 = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    invalid = draft_execute(draft_id=LLMDraft.objects.get(run=run2).pk)
    assert invalid.status == LLMDraft.Status.INVALID
    assert {issue["code"] for issue in invalid.validation_errors} >= {"FORBIDDEN_KEY"}


def test_accept_whole_records_source_draft_and_stats(parent, annotator):
    config = scripted(default=json.dumps(pass1(parent.problem_id, NODE)))
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=annotator, dispatch=False)
    draft = draft_execute(draft_id=run.drafts.get().pk)
    doc = draft_accept(draft=draft, actor=annotator, expected_version=None)
    draft.refresh_from_db()
    assert doc.document == draft.parsed_document and draft.status == LLMDraft.Status.ACCEPTED
    assert draft.accepted_into == doc
    assert {k: draft.acceptance[k] for k in ("added", "removed", "changed", "mode")} == {
        "added": 0,
        "removed": 0,
        "changed": 0,
        "mode": "whole",
    }
    version = PassDocumentVersion.objects.get(pass_document=doc, version=doc.version)
    assert version.source_draft == draft and "accepted LLM draft" in version.note
    with pytest.raises(ApplicationError):
        draft_accept(draft=draft, actor=annotator, expected_version=doc.version)


def test_accept_per_record_merges_into_current_and_counts_human_changes(parent, annotator):
    node2 = {**NODE, "id": "v002", "text": "θ", "bbox_1000": [300, 300, 350, 350]}
    current = PassDocumentFactory(
        parent=parent, pass_no=1, document=pass1(parent.problem_id, {**NODE, "text": "M"})
    )
    config = scripted(default=json.dumps(pass1(parent.problem_id, NODE, node2)))
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=annotator, dispatch=False)
    draft = draft_execute(draft_id=run.drafts.get().pk)
    with pytest.raises(ConflictError):
        draft_accept(
            draft=draft,
            actor=annotator,
            expected_version=current.version + 5,
            record_keys=["visual_nodes/v002"],
        )
    doc = draft_accept(
        draft=draft, actor=annotator, expected_version=current.version, record_keys=["visual_nodes/v002"]
    )
    assert [n["text"] for n in doc.document["visual_nodes"]] == [
        "M",
        "θ",
    ]  # human's v001 kept, draft's v002 added
    draft.refresh_from_db()
    assert draft.acceptance["mode"] == "records" and draft.acceptance["changed"] == 1
    assert draft.acceptance["kept"] >= 1 and draft.acceptance["version"] == doc.version


def test_stale_accept_changes_nothing(parent, annotator):
    current = PassDocumentFactory(parent=parent, pass_no=1, document=pass1(parent.problem_id))
    config = scripted(default=json.dumps(pass1(parent.problem_id, NODE)))
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=annotator, dispatch=False)
    draft = draft_execute(draft_id=run.drafts.get().pk)
    with pytest.raises(ConflictError):
        draft_accept(draft=draft, actor=annotator, expected_version=current.version + 1)
    draft.refresh_from_db()
    current.refresh_from_db()
    assert draft.status == LLMDraft.Status.READY and current.document == pass1(parent.problem_id)


def test_discard_and_failed_request(parent, annotator):
    config = scripted(responses=[{"match": None, "outputs": [{"error": 401}]}])
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=annotator, dispatch=False)
    draft = draft_execute(draft_id=run.drafts.get().pk)
    assert (
        draft.status == LLMDraft.Status.FAILED and draft.error.startswith("auth") and len(draft.attempts) == 1
    )
    assert draft_discard(draft=draft, actor=annotator).status == LLMDraft.Status.DISCARDED
    with pytest.raises(ApplicationError):
        draft_discard(draft=draft, actor=annotator)


def test_pass5_run_refused_until_passes_approved(parent, annotator):
    with pytest.raises(ApplicationError) as info:
        draft_run_create(pass_no=5, model_config=scripted(default="{}"), parents=[parent], actor=annotator)
    assert info.value.code == "nothing_to_draft" and not DraftRun.objects.exists()


def test_acceptance_stats_counts_by_record():
    draft = pass1("p", NODE, {**NODE, "id": "v002"})
    final = pass1("p", {**NODE, "text": "n"}, {**NODE, "id": "v003"})
    assert acceptance_stats(draft_document=draft, accepted_document=final) == {
        "added": 1,
        "removed": 1,
        "changed": 1,
        "kept": 1,
    }  # kept: problem_id


def test_simulated_demo_model_drafts_valid_pass1_offline(parent, django_capture_on_commit_callbacks):
    from models_registry.demo import demo_models_ensure

    demo_models_ensure()
    config = ModelConfig.objects.get(name="simulated")
    config.extra = {**config.extra, "latency_ms": 0, "faults": {}}
    config.save()
    with django_capture_on_commit_callbacks(execute=True):
        run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None)
    draft = run.drafts.get()
    assert draft.status == LLMDraft.Status.READY, draft.validation_errors
    assert [n["image_id"] for n in draft.parsed_document["visual_nodes"]] == ["img_0", "img_1"]
    assert PassDocument.objects.filter(parent=parent).count() == 0  # a draft never writes the document
