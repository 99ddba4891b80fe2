"""Unauthenticated API calls get the token challenge; refused requests are logged as one line."""

from __future__ import annotations

import io
import logging
import re

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import PassDocument
from physalign_site.logfilters import ClientErrorsOneLine
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory

pytestmark = pytest.mark.django_db


# --- 401 with WWW-Authenticate ------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/api/parents/", "/api/me/", "/api/schema/", "/api/eval/runs/"])
def test_anonymous_api_calls_get_401_with_the_token_challenge(url):
    response = APIClient().get(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.data == {
        "message": "Authentication credentials were not provided.",
        "code": "not_authenticated",
        "extra": {},
    }


def test_a_logged_in_user_without_the_role_still_gets_403(django_user_model):
    client = APIClient()
    client.force_login(make_user(django_user_model, "nobody"))
    response = client.get("/api/parents/")
    assert response.status_code == 403
    assert "WWW-Authenticate" not in response


def test_session_writes_still_need_the_csrf_token_and_token_writes_do_not(admin_user_role):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin_user_role)
    refused = client.post("/api/sources/", {"name": "csrf-less"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["message"].startswith("CSRF Failed")
    token_client = APIClient(enforce_csrf_checks=True)
    token_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user_role).key}")
    assert token_client.post("/api/sources/", {"name": "with-token"}, format="json").status_code == 201


# --- one line per refused request ---------------------------------------------------------------------


@pytest.fixture
def console_lines():
    """What the configured console handler writes, one entry per line, without the timestamp."""
    handler = next(
        h for h in logging.getLogger().handlers if any(isinstance(f, ClientErrorsOneLine) for f in h.filters)
    )
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield lambda: [re.sub(r"^\d{4}-\d\d-\d\d \S+ ", "", line) for line in buffer.getvalue().splitlines()]
    finally:
        handler.setStream(previous)


def test_a_permission_denied_page_is_logged_as_one_warning_line(client, annotator, caplog, console_lines):
    client.force_login(annotator)
    with caplog.at_level(logging.INFO):
        response = client.get("/runs/")  # admins only
    assert response.status_code == 403
    assert [(r.name, r.levelname) for r in caplog.records if r.name.startswith("django")] == [
        ("django.request", "WARNING")
    ]
    assert console_lines() == [
        "WARNING django.request: Forbidden (Permission denied): /runs/ (PermissionDenied)"
    ]


def test_an_application_error_403_on_the_api_is_logged_as_one_warning_line(
    source_reviewer, caplog, console_lines
):
    doc = PassDocumentFactory(
        parent=ParentProblemFactory(problem_id="prob_self"),
        pass_no=1,
        status=PassDocument.Status.SUBMITTED,
        updated_by=source_reviewer,
    )
    client = APIClient()
    client.force_login(source_reviewer)
    with caplog.at_level(logging.INFO):
        response = client.post(
            "/api/parents/prob_self/passes/1/approve/",
            {"document_sha256": doc.document_sha256},
            format="json",
        )
    assert response.status_code == 403 and response.json()["code"] == "self_review"
    assert [(r.name, r.levelname) for r in caplog.records if r.name.startswith("django")] == [
        ("django.request", "WARNING")
    ]
    assert console_lines() == ["WARNING django.request: Forbidden: /api/parents/prob_self/passes/1/approve/"]
    assert PassDocument.objects.get(pk=doc.pk).status == PassDocument.Status.SUBMITTED


def test_a_suspicious_request_is_one_line_too(client, console_lines):
    assert client.get("/accounts/login/", headers={"Host": "evil.example"}).status_code == 400
    lines = console_lines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "ERROR django.security.DisallowedHost: Invalid HTTP_HOST header: 'evil.example'."
    )
    assert lines[0].endswith(
        "(DisallowedHost: Invalid HTTP_HOST header: 'evil.example'. You may need to add "
        "'evil.example' to ALLOWED_HOSTS.)"
    )


def test_server_errors_keep_their_traceback():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        exc_info = sys.exc_info()
    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(ClientErrorsOneLine())
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    for status in (500, 403):
        record = logging.LogRecord(
            "django.request", logging.ERROR, __file__, 1, "Failure: %s", ("/x",), exc_info
        )
        record.status_code = status
        handler.handle(record)
        assert record.exc_info is exc_info  # the filter never changes the record other handlers get
    text = handler.stream.getvalue()
    assert text.count("Traceback (most recent call last)") == 1
    assert text.splitlines()[-1] == "ERROR Failure: /x (RuntimeError: boom)"
