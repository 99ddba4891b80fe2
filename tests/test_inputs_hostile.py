"""Issue 25, items 5–7, as an attacker sends them over HTTP: text PostgreSQL cannot store in a query
parameter, form field or path (one middleware, a 400 naming the field); oversized and malformed integers
in the run launch, its preview and the run API (a typed ``probe_filter``); JSON nested past any stack
(one strict parser, a 400 with the reason). Each attack asserts the refusal and that nothing changed."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import QueryDict
from django.utils.datastructures import MultiValueDict
from rest_framework.test import APIClient

from annotation.models import Source
from evaluation.models import EvalRun
from models_registry.models import ModelConfig
from physalign_site import jsonsafety
from physalign_site.errors import ApplicationError
from physalign_site.params import MAX_INT, require_storable
from probes.models import Probe
from review.models import KitDecision, KitDraftImport
from tests.conftest import make_user
from tests.endpoint_matrix.evaluation_cases import _probe
from tests.factories import ParentProblemFactory

pytestmark = pytest.mark.django_db

DEEP_ARRAYS = "[" * 100_000 + "]" * 100_000
DEEP_OBJECTS = '{"a":' * 3000 + "1" + "}" * 3000


def logged_in(client: Any, user: Any) -> Any:
    client.force_login(user)
    return client


def api_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def key_holder(django_user_model) -> Any:
    """An admin with the key-holder permission: who may open the Kit decision pages."""
    user = make_user(django_user_model, "hostile_key_holder", "admin")
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return user


def assert_refused_page(response: Any, field: str) -> None:
    """The error page of a 400 that names the field (HTML, through the ApplicationError page)."""
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    assert f"&quot;{field}&quot; contains the NUL character \\u0000, which cannot be stored." in text


# --- item 5: NUL (and lone surrogates) in query parameters and form fields → 400 naming the field ---------


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/probes/?parent=%00", "parent"),
        ("/probes/?interface=%00", "interface"),
        ("/probes/?state=T%00", "state"),
        ("/probes/?split=%00&page=2", "split"),
        ("/source-review/?q=%00", "q"),
        ("/review/agreement/?context=%00", "context"),
        ("/problems/?q=a%00b", "q"),
    ],
)
def test_a_nul_in_a_query_parameter_is_a_400_page_naming_it(client, admin_user_role, url, field):
    assert_refused_page(logged_in(client, admin_user_role).get(url), field)


def test_the_source_queue_refuses_it_for_its_own_role_too(client, source_reviewer):
    assert_refused_page(logged_in(client, source_reviewer).get("/source-review/?q=%00"), "q")


def test_a_nul_in_a_form_field_is_a_400_and_launches_nothing(client, admin_user_role):
    ModelConfig.objects.create(name="m", provider="simulated", model="sim")
    response = logged_in(client, admin_user_role).post(
        "/runs/", {"name": "run\x00", "models": ["m"], "conditions": ["raw"], "resamples": "20"}
    )
    assert_refused_page(response, "name")
    assert not EvalRun.objects.exists()


def test_a_nul_in_a_multipart_text_field_is_a_400_but_file_content_may_hold_any_byte(client, key_holder):
    page = logged_in(client, key_holder)
    binary = SimpleUploadedFile("d.json", b'{"a": "\x00\xff"}\x00', content_type="application/json")
    response = page.post("/review/kit-decisions/", {"action": "decisions\x00", "file": binary})
    assert_refused_page(response, "action")
    binary.seek(0)
    response = page.post("/review/kit-decisions/", {"action": "decisions", "file": binary}, follow=True)
    assert response.status_code == 200  # the bytes reached the parser, which says what is wrong with them
    assert [str(m) for m in response.context["messages"]] == [
        "The decision file is not valid JSON: The JSON is not valid UTF-8 (byte 8). (REVIEW_FILE_JSON_INVALID)"
    ]
    assert not KitDecision.objects.exists()


def test_a_nul_in_the_path_is_a_400(client, admin_user_role):
    response = logged_in(client, admin_user_role).get("/problems/%00/")
    assert response.status_code == 400
    assert "The URL path contains the NUL character" in response.content.decode()


def test_an_api_query_parameter_with_a_nul_is_the_api_error_json(admin_user_role):
    response = api_for(admin_user_role).get("/api/probes/?interface=T02%00")
    assert response.status_code == 400
    assert response.json() == {
        "message": 'The query parameter "interface" contains the NUL character \\u0000, which cannot be stored.',
        "code": "unstorable_text",
        "extra": {"parameter": "interface", "in": "query parameter"},
    }


@pytest.mark.parametrize("fmt", ["multipart", "urlencoded"])
def test_an_api_form_body_with_a_nul_is_a_400_naming_the_field_and_creates_nothing(admin_user_role, fmt):
    client = api_for(admin_user_role)
    before = Source.objects.count()
    if fmt == "multipart":
        response = client.post("/api/sources/", {"name": "evil\x00", "license": "CC"}, format="multipart")
    else:
        response = client.post(
            "/api/sources/", "name=evil%00&license=CC", content_type="application/x-www-form-urlencoded"
        )
    assert response.status_code == 400
    assert response.json()["code"] == "unstorable_text"
    assert response.json()["extra"] == {"parameter": "name", "in": "form field"}
    assert Source.objects.count() == before


def test_too_many_api_query_parameters_is_still_the_api_error_json(admin_user_role, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    response = api_for(admin_user_role).get("/api/probes/?" + "&".join(f"p{i}=1" for i in range(6)))
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_fields"


def test_a_nul_in_a_parameter_name_is_named_printably(client, admin_user_role):
    response = logged_in(client, admin_user_role).get("/probes/?a%00b=1")
    assert response.status_code == 400
    assert "&quot;a\\u0000b&quot; contains the NUL character" in response.content.decode()


def test_a_lone_surrogate_is_refused_naming_the_field():
    """Django decodes the wire's bytes with replacement (``%ED%A0%80`` arrives as U+FFFD, which is storable),
    so a surrogate reaches a view only from code; the one check refuses it all the same."""
    data = MultiValueDict({"context": ["dev\ud800"]})
    with pytest.raises(ApplicationError) as refused:
        require_storable(data, where="form field")
    assert refused.value.message == (
        'The form field "context" contains an unpaired surrogate such as \\ud800, which cannot be stored.'
    )
    assert refused.value.extra == {"parameter": "context", "in": "form field"}
    require_storable(QueryDict("q=%ED%A0%80"), where="query parameter")  # U+FFFD ×3: storable


def test_a_surrogate_on_the_wire_is_an_ordinary_page(client, admin_user_role):
    assert logged_in(client, admin_user_role).get("/probes/?parent=%ED%A0%80").status_code == 200


# --- item 6: oversized and malformed integers → 400 naming the field ----------------------------------------


@pytest.fixture
def launchable() -> Probe:
    """An active model and one live probe, so a launch with a valid body would create a run."""
    ModelConfig.objects.create(name="m", provider="simulated", model="sim")
    probe = _probe(ParentProblemFactory(problem_id="hostile-eval"), "PAQ-HOSTILE-1")
    Probe.objects.filter(pk=probe.pk).update(state="approved")
    return probe


@pytest.mark.parametrize("limit", ["99999999999999999999", str(MAX_INT + 1), "1e20", "-5", "0", "abc"])
def test_the_preview_refuses_a_limit_that_is_not_a_whole_number_in_range(client, admin_user_role, limit):
    response = logged_in(client, admin_user_role).get(
        "/runs/preview/", {"models": "m", "conditions": "raw", "limit": limit}
    )
    assert response.status_code == 400
    assert "limit: " in response.content.decode()


def test_the_preview_still_counts_with_a_valid_limit(client, admin_user_role, launchable):
    response = logged_in(client, admin_user_role).get(
        "/runs/preview/", {"models": "m", "conditions": "raw", "limit": "1"}
    )
    assert response.status_code == 200
    assert response.context["preview"].total == 1


@pytest.mark.parametrize("limit", ["1e20", "99999999999999999999", str(MAX_INT + 1)])
def test_the_launch_refuses_an_oversized_limit_and_creates_no_run(client, admin_user_role, launchable, limit):
    response = logged_in(client, admin_user_role).post(
        "/runs/", {"models": ["m"], "conditions": ["raw"], "resamples": "20", "limit": limit}
    )
    assert response.status_code == 400
    assert "limit: " in response.content.decode()
    assert not EvalRun.objects.exists()


def launch_api(user: Any, probe_filter: Any) -> Any:
    body = {"models": ["m"], "conditions": ["raw"], "resamples": 20, "probe_filter": probe_filter}
    return api_for(user).post("/api/eval/runs/", body, format="json")


@pytest.mark.parametrize("limit", ["abc", -5, 0, 1e30, [1], 10**20, MAX_INT + 1, True, "1.5"])
def test_the_run_api_refuses_a_malformed_limit_naming_it(admin_user_role, launchable, limit):
    response = launch_api(admin_user_role, {"limit": limit})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    assert list(body["extra"]["fields"]) == ["probe_filter"]
    assert list(body["extra"]["fields"]["probe_filter"]) == ["limit"]
    assert not EvalRun.objects.exists()


@pytest.mark.parametrize(
    ("probe_filter", "field"),
    [
        ({"split": "test"}, "split"),
        ({"interface": "T99"}, "interface"),
        ({"task_id": "T04"}, "task_id"),
        ({"probe_ids": "PAQ-1"}, "probe_ids"),
        ({"probe_ids": []}, "probe_ids"),
        ({"probe_ids": ["x" * 69]}, "probe_ids"),
    ],
)
def test_the_run_api_refuses_an_unknown_or_mistyped_filter(admin_user_role, launchable, probe_filter, field):
    response = launch_api(admin_user_role, probe_filter)
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]["probe_filter"]) == [field]
    assert not EvalRun.objects.exists()


@pytest.mark.parametrize("probe_filter", ["abc", [1], 5])
def test_the_run_api_refuses_a_filter_that_is_not_an_object(admin_user_role, launchable, probe_filter):
    response = launch_api(admin_user_role, probe_filter)
    assert response.status_code == 400
    assert "probe_filter" in response.json()["extra"]["fields"]
    assert not EvalRun.objects.exists()


def test_the_run_api_takes_a_typed_filter(admin_user_role, launchable):
    probe_filter = {"interface": "T02-single", "task_id": "T02", "probe_ids": ["PAQ-HOSTILE-1"], "limit": 1}
    response = launch_api(admin_user_role, probe_filter)
    assert response.status_code == 201, response.json()
    run = EvalRun.objects.get()
    assert run.probe_filter == probe_filter
    assert response.json()["total"] == 1


def test_the_schema_shows_the_filter_typed(admin_user_role):
    schema = api_for(admin_user_role).get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    run_input = components.get("EvalRunInputRequest") or components["EvalRunInput"]
    ref = run_input["properties"]["probe_filter"]
    name = (ref.get("$ref") or ref["allOf"][0]["$ref"]).rsplit("/", 1)[-1]
    typed = components[name]["properties"]
    assert typed["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_INT,
        "description": "At most this many probes, in id order",
    }
    assert set(typed) == {"interface", "task_id", "probe_ids", "limit"}
    assert typed["probe_ids"]["items"]["maxLength"] == 68


# --- item 7: JSON nested past any stack → 400 (or the page's message) with the reason ---------------------


@pytest.mark.parametrize(
    "document", [DEEP_ARRAYS, DEEP_OBJECTS, "[" * 100_000], ids=["100k arrays", "3k objects", "unclosed"]
)
def test_a_deeply_nested_kit_decision_file_is_refused_with_the_reason(client, key_holder, document):
    upload = SimpleUploadedFile("d.json", document.encode(), content_type="application/json")
    response = logged_in(client, key_holder).post(
        "/review/kit-decisions/", {"action": "decisions", "file": upload}, follow=True
    )
    assert response.status_code == 200  # the page's way: back to the page with the message
    assert [str(m) for m in response.context["messages"]] == [
        "The decision file is not valid JSON: The JSON is nested more than 64 levels deep. "
        "(REVIEW_FILE_JSON_INVALID)"
    ]
    assert not KitDecision.objects.exists()


def test_a_kit_draft_whose_manifest_is_nested_too_deep_is_refused_with_the_reason(client, key_holder):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("kit_draft/catalog.PRIVATE.json", "{}")
        archive.writestr("kit_draft/FILE_MANIFEST.json", DEEP_OBJECTS)
    upload = SimpleUploadedFile("draft.zip", buffer.getvalue(), content_type="application/zip")
    response = logged_in(client, key_holder).post(
        "/review/kit-decisions/", {"action": "draft", "file": upload}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "The Kit draft was refused: DRAFT_JSON_INVALID: FILE_MANIFEST.json: The JSON is nested more than "
        "64 levels deep. (DRAFT_JSON_INVALID)"
    ]
    assert not KitDraftImport.objects.exists()


@pytest.mark.parametrize("document", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["100k arrays", "3k objects"])
def test_a_deeply_nested_api_body_is_a_400_with_the_reason(admin_user_role, document):
    body = '{"models": ["m"], "conditions": ["raw"], "probe_filter": ' + document + "}"
    response = api_for(admin_user_role).post("/api/eval/runs/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "json_too_deep"
    assert response.json()["message"].startswith("The JSON is nested more than 64 levels deep")
    assert not EvalRun.objects.exists()


def test_a_key_given_twice_in_an_api_body_is_a_400(admin_user_role):
    before = Source.objects.count()
    response = api_for(admin_user_role).post(
        "/api/sources/", '{"name": "a", "name": "b"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "json_duplicate_key"
    assert response.json()["message"] == 'duplicate key "name": a JSON object may name a key once.'
    assert Source.objects.count() == before


def test_the_one_parser_has_a_size_limit_and_reads_files_as_the_kit_does():
    with pytest.raises(jsonsafety.JSONRejected) as refused:
        jsonsafety.loads(b"[" + b"1," * 600 + b"1]", max_bytes=1000)
    assert refused.value.code == "json_too_large"
    with pytest.raises(jsonsafety.JSONRejected) as refused:
        jsonsafety.loads("[" + "\u00e9" * 400 + "]", max_bytes=700)  # counted in UTF-8 bytes, not characters
    assert refused.value.code == "json_too_large"
    assert jsonsafety.loads(b"\xef\xbb\xbf" + json.dumps({"a": 1}).encode()) == {"a": 1}  # a BOM is dropped
    with pytest.raises(jsonsafety.JSONRejected) as refused:
        jsonsafety.loads(b'{"a": "\xff"}')
    assert refused.value.code == "json_not_utf8"
    with pytest.raises(jsonsafety.JSONRejected) as refused:
        jsonsafety.loads('{"a": {"b": 1, "b": 2}}')
    assert refused.value.code == "json_duplicate_key"
