"""Hostile input never becomes a 500: JSON the database cannot store, deep nesting, oversized bodies,
digit-like parameters that int() refuses, and model outputs that used to leave a draft pending."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.messages import get_messages
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.drafting.services import draft_execute, draft_run_create
from annotation.models import LLMDraft, ParentProblem, PassDocument, Source
from annotation.services import pass_document_save
from evaluation.models import EvalRun
from llm.types import ProviderReply, Usage
from models_registry.models import ModelConfig
from tests.factories import ParentProblemFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db

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


def pass1(pid: str, *nodes: dict[str, Any]) -> dict[str, Any]:
    return {"problem_id": pid, "visual_nodes": list(nodes), "ambiguities": []}


def api_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def parent() -> ParentProblem:
    parent = ParentProblemFactory(problem_id="prob_attack")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    return parent


@pytest.fixture
def saved(parent, annotator, settings) -> PassDocument:
    """Pass 1 saved twice: versions 1 (empty) and 2 (one node)."""
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = 0  # one history version per save
    first = pass_document_save(
        parent=parent, pass_no=1, document=pass1(parent.problem_id), actor=annotator, expected_version=None
    )
    return pass_document_save(
        parent=parent,
        pass_no=1,
        document=pass1(parent.problem_id, NODE),
        actor=annotator,
        expected_version=first.version,
    )


def put_raw(client: APIClient, parent: ParentProblem, body: str | bytes, version: int = 2):
    return client.put(
        f"/api/parents/{parent.problem_id}/passes/1/",
        data=body,
        content_type="application/json",
        headers={"If-Match": f'"{version}"'},
    )


def assert_unchanged(doc: PassDocument) -> None:
    fresh = PassDocument.objects.get(pk=doc.pk)
    assert (fresh.version, fresh.document_sha256) == (doc.version, doc.document_sha256)


# --- JSON bodies --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "fragment"),
    [
        ("m\\u0000", "json_nul_character", "NUL character \\u0000"),
        ("\\ud800", "json_lone_surrogate", "unpaired surrogate such as \\ud800"),
        ("\\udfff tail", "json_lone_surrogate", "unpaired surrogate such as \\udfff"),
    ],
)
def test_pass_put_with_a_string_postgres_cannot_store_is_a_400_naming_the_path(
    annotator, parent, saved, text, code, fragment
):
    node = json.dumps(NODE).replace('"text": "m"', f'"text": "{text}"')
    body = '{"document": {"problem_id": "prob_attack", "visual_nodes": [' + node + '], "ambiguities": []}}'
    response = put_raw(api_for(annotator), parent, body)
    assert response.status_code == 400
    assert response.json() == {
        "message": f"JSON strings may not contain {'the ' if code == 'json_nul_character' else 'an '}"
        f"{fragment} (at $.document.visual_nodes[0].text).",
        "code": code,
        "extra": {"path": "$.document.visual_nodes[0].text"},
    }
    assert_unchanged(saved)


def test_a_nul_in_a_key_is_refused_too(annotator, parent, saved):
    response = put_raw(
        api_for(annotator), parent, '{"document": {"problem_id": "prob_attack", "a\\u0000": 1}}'
    )
    assert response.status_code == 400
    assert response.json()["code"] == "json_nul_character"
    assert response.json()["extra"] == {"path": '$.document["a\\u0000"]'}
    assert_unchanged(saved)


def test_a_valid_surrogate_pair_is_an_ordinary_character(annotator, parent, saved):
    node = json.dumps(NODE).replace('"text": "m"', '"text": "\\ud835\\udc5a"')  # 𝑚, U+1D45A
    body = '{"document": {"problem_id": "prob_attack", "visual_nodes": [' + node + '], "ambiguities": []}}'
    response = put_raw(api_for(annotator), parent, body)
    assert response.status_code == 200
    assert PassDocument.objects.get(pk=saved.pk).document["visual_nodes"][0]["text"] == "\U0001d45a"


@pytest.mark.parametrize("depth", [65, 900, 5000])
def test_deeply_nested_body_is_a_400_not_a_recursion_error(annotator, parent, saved, depth):
    body = '{"document": ' + "[" * depth + "]" * depth + "}"
    response = put_raw(api_for(annotator), parent, body)
    assert response.status_code == 400
    assert response.json()["code"] == "json_too_deep"
    assert response.json()["message"].startswith("The JSON is nested more than 64 levels deep")
    assert_unchanged(saved)


@pytest.mark.parametrize(("lists", "code"), [(63, "validation_error"), (64, "json_too_deep")])
def test_sixty_four_containers_pass_the_parser_and_sixty_five_do_not(admin_user_role, lists, code):
    body = '{"name": ' + "[" * lists + "]" * lists + "}"
    response = api_for(admin_user_role).post("/api/sources/", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == code  # 64 deep reaches the serializer, which wants a string


@pytest.mark.parametrize(
    ("number", "code"),
    [
        ("1e999", "json_number_not_finite"),
        ("NaN", "json_number_not_finite"),
        ("-Infinity", "json_number_not_finite"),
    ],
)
def test_non_finite_numbers_are_refused(annotator, parent, saved, number, code):
    response = put_raw(
        api_for(annotator), parent, '{"document": {"problem_id": "prob_attack", "x": ' + number + "}}"
    )
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert_unchanged(saved)


def test_every_api_endpoint_gets_the_same_checks(admin_user_role):
    response = api_for(admin_user_role).post(
        "/api/sources/", data='{"name": "nul\\u0000"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["extra"] == {"path": "$.name"}
    assert not Source.objects.filter(name__startswith="nul").exists()


# --- body size ----------------------------------------------------------------------------------------


def test_a_json_body_over_the_upload_limit_is_a_json_413(annotator, parent, saved, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    body = json.dumps({"document": {**pass1(parent.problem_id), "padding": "x" * 3_000}})
    response = put_raw(api_for(annotator), parent, body)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "message": "The request body is larger than the limit of 2000 bytes.",
        "code": "request_too_large",
        "extra": {"limit_bytes": 2000},
    }
    assert_unchanged(saved)


def test_a_form_body_over_the_upload_limit_is_a_json_413(admin_user_role, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    response = api_for(admin_user_role).post(
        "/api/sources/", data={"name": "big", "license": "x" * 3_000}, format="multipart"
    )
    assert response.status_code == 413
    assert response.json()["code"] == "request_too_large"
    assert not Source.objects.filter(name="big").exists()


def test_a_url_encoded_body_over_the_upload_limit_is_a_json_413_with_token_auth_too(
    admin_user_role, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user_role).key}")
    response = client.post(
        "/api/sources/",
        data=urlencode({"name": "big", "license": "x" * 3_000}),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 413
    assert response.json()["code"] == "request_too_large"
    assert not Source.objects.filter(name="big").exists()


def test_too_many_form_fields_is_a_json_400(admin_user_role, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user_role).key}")
    response = client.post(
        "/api/sources/",
        data=urlencode({f"f{n}": "x" for n in range(10)}),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_fields"


def test_a_body_within_the_limit_still_saves(annotator, parent, saved, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    body = json.dumps({"document": {**pass1(parent.problem_id), "padding": "x" * 500}})
    assert put_raw(api_for(annotator), parent, body).status_code == 200


# --- whole-number parameters --------------------------------------------------------------------------

BAD_NUMBERS = ["²", "٣", "1.5", "-1", "9" * 5000, "99999999999"]


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_diff_api_refuses_non_ascii_digit_versions_with_400(annotator, parent, saved, value):
    response = api_for(annotator).get(
        f"/api/parents/{parent.problem_id}/passes/1/diff/", {"from": value, "to": "2"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "message": "from must be a whole number between 0 and 2147483647.",
        "code": "invalid_parameter",
        "extra": {"parameter": "from"},
    }


def test_diff_api_still_diffs_and_still_requires_both_versions(annotator, parent, saved):
    client = api_for(annotator)
    ok = client.get(f"/api/parents/{parent.problem_id}/passes/1/diff/", {"from": "1", "to": "2"})
    assert ok.status_code == 200 and (ok.json()["from"], ok.json()["to"]) == (1, 2)
    missing = client.get(f"/api/parents/{parent.problem_id}/passes/1/diff/", {"from": "1"})
    assert missing.status_code == 400 and missing.json()["code"] == "versions_required"


@pytest.mark.parametrize("value", ["²", "9" * 5000])
def test_if_match_with_digit_like_characters_is_a_400(annotator, parent, saved, value):
    body = json.dumps({"document": pass1(parent.problem_id)})
    client = api_for(annotator)
    response = client.put(
        f"/api/parents/{parent.problem_id}/passes/1/",
        data=body,
        content_type="application/json",
        headers={"If-Match": f'"{value}"'},
    )
    assert response.status_code == 400 and response.json()["code"] == "precondition_invalid"
    revert = client.post(
        f"/api/parents/{parent.problem_id}/passes/1/versions/1/revert/", headers={"If-Match": value}
    )
    assert revert.status_code == 400 and revert.json()["code"] == "precondition_invalid"
    assert_unchanged(saved)


@pytest.mark.parametrize("name", ["from", "to"])
def test_history_page_with_a_digit_like_version_is_a_400_page_with_the_message(
    client, annotator, parent, saved, name
):
    client.force_login(annotator)
    response = client.get(f"/problems/{parent.problem_id}/passes/1/history/", {name: "²"})
    assert response.status_code == 400
    assert f"{name} must be a whole number between 0 and 2147483647." in response.content.decode()
    assert client.get(f"/problems/{parent.problem_id}/passes/1/history/", {name: "1"}).status_code == 200


def test_revert_form_with_a_digit_like_expected_version_says_so_and_changes_nothing(
    client, annotator, parent, saved
):
    client.force_login(annotator)
    response = client.post(
        f"/problems/{parent.problem_id}/passes/1/history/1/revert/", {"expected_version": "²"}
    )
    assert response.status_code == 302
    assert [m.message for m in get_messages(response.wsgi_request)] == [
        "expected_version must be a whole number between 0 and 2147483647."
    ]
    assert_unchanged(saved)


def test_draft_accept_form_with_a_digit_like_expected_version_says_so(client, annotator, parent, saved):
    config = ModelConfig.objects.create(
        name="script",
        provider="scripted",
        model="script-1",
        extra={"default": json.dumps(pass1(parent.problem_id, NODE))},
    )
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = draft_execute(draft_id=LLMDraft.objects.get(run=run).pk)
    assert draft.status == LLMDraft.Status.READY
    client.force_login(annotator)
    response = client.post(f"/drafts/{draft.pk}/accept", {"expected_version": "²"})
    assert response.status_code == 302
    assert [m.message for m in get_messages(response.wsgi_request)] == [
        "expected_version must be a whole number between 0 and 2147483647."
    ]
    draft.refresh_from_db()
    assert draft.status == LLMDraft.Status.READY
    assert_unchanged(saved)


def test_draft_home_with_a_digit_like_pass_number_says_so(client, annotator, parent):
    config = ModelConfig.objects.create(name="script", provider="scripted", model="script-1")
    client.force_login(annotator)
    response = client.post("/drafts/", {"pass_no": "²", "model": config.name})
    assert response.status_code == 302
    assert [m.message for m in get_messages(response.wsgi_request)] == [
        "pass_no must be a whole number between 0 and 2147483647."
    ]
    assert not LLMDraft.objects.exists()


def test_run_results_with_a_digit_like_solve_run_is_a_400(client, admin_user_role):
    run = EvalRun.objects.create(name="r", conditions=["raw"], status="completed", options={"resamples": 20})
    client.force_login(admin_user_role)
    response = client.get(f"/runs/{run.pk}/", {"solve": "²"})
    assert response.status_code == 400
    assert "solve must be a whole number between 0 and 2147483647." in response.content.decode()
    assert client.get(f"/runs/{run.pk}/", {"solve": "12345"}).status_code == 200


def test_debate_compare_with_a_digit_like_run_is_a_400(client, admin_user_role):
    client.force_login(admin_user_role)
    response = client.get("/debate/compare/", {"runs": ["1", "²"]})
    assert response.status_code == 400
    assert "runs must be a whole number between 0 and 2147483647." in response.content.decode()
    assert client.get("/debate/compare/", {"runs": "1"}).status_code == 200


# --- LLM drafts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "error"),
    [
        (
            "[" * 5000 + "]" * 5000,
            "The output is not usable JSON: The JSON is nested more than 64 levels deep.",
        ),
        (
            '{"problem_id": "prob_attack", "x": ' + "[" * 100 + "]" * 100 + "}",
            "The output is not usable JSON: The JSON is nested more than 64 levels deep (at $.x"
            + "[0]" * 63
            + ").",
        ),
        (
            '{"problem_id": "prob_attack", "visual_nodes": [{"text": "\\u0000"}]}',
            "The output is not usable JSON: JSON strings may not contain the NUL character \\u0000 "
            "(at $.visual_nodes[0].text).",
        ),
        (
            '{"problem_id": "prob_attack", "x": "\\ud800"}',
            "The output is not usable JSON: JSON strings may not contain an unpaired surrogate such as \\ud800 (at $.x).",
        ),
        (
            '{"problem_id": "prob_attack", "x": NaN}',
            "The output is not usable JSON: JSON has no NaN; numbers must be finite.",
        ),
    ],
)
def test_draft_output_the_database_cannot_store_fails_the_draft_with_a_parse_error(parent, output, error):
    config = ModelConfig.objects.create(
        name="script", provider="scripted", model="script-1", extra={"default": output}
    )
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = draft_execute(draft_id=LLMDraft.objects.get(run=run).pk)
    assert draft.status == LLMDraft.Status.FAILED
    assert draft.parsed_document is None
    assert draft.error == error
    assert draft.validation_errors == [{"code": "PARSE_ERROR", "path": "", "message": error}]
    assert draft.raw_output == output
    run.refresh_from_db()
    assert (run.done, run.failed, run.status) == (0, 1, "failed")


class RawTextProvider:
    """A provider whose reply is a fixed text: the scripted model's texts live in a jsonb column,
    which cannot hold the raw NUL character a real provider may return."""

    def __init__(self, text: str) -> None:
        self.text = text

    def call(self, request: Any, config: Any, *, http_client: Any = None, attempt: int = 1) -> ProviderReply:
        return ProviderReply(text=self.text, finish_reason="stop", usage=Usage(), raw={})


def test_a_raw_nul_or_surrogate_in_the_output_is_stored_as_a_replacement_character(parent):
    config = ModelConfig.objects.create(name="script", provider="scripted", model="script-1")
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = draft_execute(
        draft_id=LLMDraft.objects.get(run=run).pk, provider=RawTextProvider("not json \x00 at all \ud800")
    )
    assert draft.status == LLMDraft.Status.FAILED
    assert draft.raw_output == "not json \ufffd at all \ufffd"
    assert draft.error == "The output is not valid JSON: Expecting value: line 1 column 1 (char 0)"


# --- text length, CLI and other digit-like input -----------------------------------------------------------------


def test_an_over_long_label_in_a_pass_put_is_a_400_and_changes_nothing(annotator, parent, saved, settings):
    settings.PHYSALIGN_TEXT_MAX_CHARS = 1000
    node = json.dumps(NODE).replace('"text": "m"', f'"text": "{"m" * 1001}"')
    body = '{"document": {"problem_id": "prob_attack", "visual_nodes": [' + node + '], "ambiguities": []}}'
    response = put_raw(api_for(annotator), parent, body)
    assert response.status_code == 400
    assert response.json()["code"] == "json_text_too_long"
    assert response.json()["extra"] == {"path": "$.document.visual_nodes[0].text"}
    assert_unchanged(saved)


@pytest.mark.parametrize("command", ["solve", "evaluate", "debate"])
def test_commands_given_a_digit_like_release_say_so(command, db):
    from django.core.management import CommandError, call_command

    extra = {
        "solve": ["--model", "m"],
        "evaluate": ["--models", "m"],
        "debate": ["--solvers", "a,b,c", "--level", "5"],
    }
    with pytest.raises(CommandError, match="release must be a whole number"):
        call_command(command, "--release", "²", *extra[command])


def test_problem_list_with_a_digit_like_source_is_a_plain_filter(client, annotator):
    client.force_login(annotator)
    assert client.get("/problems/?source=²").status_code == 200
    assert client.get("/problems/?source=" + "9" * 40).status_code == 200


def test_a_selector_naming_a_huge_number_is_no_choice():
    from solving.debate.orchestrator import parse_selection

    assert parse_selection("I pick " + "7" * 5000, ["A", "B", "C"]) is None
    assert parse_selection("I pick 2", ["A", "B", "C"]) == "B"
