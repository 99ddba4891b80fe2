"""Schemathesis against the whole API, in-process: the schema the app serves at /api/schema/, requests
generated from it (valid and invalid bodies, parameters and headers) sent as an admin with a token to the
app's WSGI handler, and no response may be a 5xx. Nothing leaves the process: the app runs in this
thread against the test database, and outbound connections are refused while it runs.

Every case runs in a savepoint that is rolled back, so every case sees the same world: the endpoint
matrix's (a parent problem with an image and pass documents 1-5, history, compiled probes, reviews,
releases, runs and models); path parameters usually name its objects, so cases get past the 404s.
"""

from __future__ import annotations

import socket
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.apps import apps
from django.contrib.auth.models import Permission
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode

from tests.endpoint_matrix import ANON, NOROLE, World
from tests.test_endpoint_matrix import AREAS

EXAMPLES_PER_OPERATION = 8
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture
def no_network(monkeypatch) -> None:
    """Refuse every outbound connection and name lookup but loopback (the test database and Redis)."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            raise OSError(f"test_api_fuzz: refused a connection to {address!r}")
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK and host is not None:
            raise socket.gaierror(f"test_api_fuzz: refused to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def wsgi_app() -> Iterator[Any]:
    """The production WSGI handler, kept off the request signals that close database connections
    (as Django's test client does): the test's transaction must survive every request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(role_users, django_user_model) -> World:
    users: dict[str, Any] = dict(role_users)
    users[ANON] = None
    users[NOROLE] = django_user_model.objects.create_user(username="user_no_role", password="pw-none")
    world = World()
    for area in AREAS:
        area.populate(world, users)
    return world


@pytest.fixture
def admin_token(role_users) -> str:
    admin = role_users["admin"]
    admin.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))  # the scorer view too
    return Token.objects.create(user=admin).key


# Which stored objects a path parameter names: (URL fragment before it, parameter) → "app.Model.field".
KNOWN_OBJECTS = {
    ("/compile-runs/", "run_id"): "probes.CompileRun.pk",
    ("/debate/responses/", "id"): "solving.SolveResponse.pk",
    ("/debate/runs/", "id"): "solving.SolveRun.pk",
    ("/draft-runs/", "run_id"): "annotation.DraftRun.pk",
    ("/drafts/", "draft_id"): "annotation.LLMDraft.pk",
    ("/eval/runs/", "id"): "evaluation.EvalRun.pk",
    ("/imports/", "job_id"): "annotation.ImportJob.pk",
    ("/models/", "name"): "models_registry.ModelConfig.name",
    ("/parents/", "problem_id"): "annotation.ParentProblem.problem_id",
    ("/versions/", "version"): "annotation.PassDocumentVersion.version",
    ("/probes/", "logical_probe_id"): "probes.Probe.logical_probe_id",
    ("/releases/", "release_id"): "probes.Release.release_id",
    ("/campaigns/", "campaign_pk"): "review.AuditCampaign.pk",
    ("/plans/", "plan_pk"): "review.AuditPlan.pk",
    ("/slots/", "slot_id"): "review.ReviewSlot.pk",
    ("/solve/responses/", "id"): "solving.SolveResponse.pk",
    ("/solve/runs/", "id"): "solving.SolveRun.pk",
    ("/sources/", "source_id"): "annotation.Source.pk",
}


def _known_values(path: str, name: str) -> list[Any]:
    for (fragment, parameter), target in KNOWN_OBJECTS.items():
        if parameter == name and f"{fragment}{{{name}}}" in path:
            label, field = target.rsplit(".", 1)
            return sorted(set(apps.get_model(label).objects.values_list(field, flat=True)))[:50]
    return []


def _cases(operation: Any, mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Anything the schema allows (or, negative, does not), and as often path parameters that name stored
    objects, so the request gets past the 404."""
    free = operation.as_strategy(generation_mode=mode)
    known = {
        parameter.name: _known_values(operation.path, parameter.name)
        for parameter in operation.path_parameters
    }
    known = {name: values for name, values in known.items() if values}
    if not known:
        return free
    bound = st.fixed_dictionaries({name: st.sampled_from(values) for name, values in known.items()}).flatmap(
        lambda params: operation.as_strategy(generation_mode=mode, path_parameters=params)
    )
    return st.one_of(free, bound, bound)


# Operations a failure of which is someone else's to fix: "METHOD /path" → why (reported to the lead).
EXCLUDED: dict[str, str] = {}


def _run_operation(operation: Any, headers: dict[str, str], statuses: set[int] | None = None) -> list[str]:
    """Every mode's examples for one operation; the failures as text (first line, request, traceback end).
    ``statuses`` collects the status codes seen."""
    failures: list[str] = []
    seen = statuses if statuses is not None else set()
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @given(case=_cases(operation, mode))
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate],
        )
        def check(case: Any) -> None:
            savepoint = transaction.savepoint_create()
            try:
                seen.add(case.call_and_validate(headers=headers, checks=[not_a_server_error]).status_code)
            finally:
                transaction.savepoint_rollback(savepoint)

        try:
            check()
        except Unsatisfiable:  # negative mode, nothing the schema constrains (no body, free-form strings)
            assert mode == GenerationMode.NEGATIVE, operation.label
        except Exception as exc:  # collected per operation, reported together below
            detail = "".join(traceback.format_exception(exc)[-6:])
            failures.append(f"{operation.label} [{mode}]: {type(exc).__name__}: {str(exc)[:800]}\n{detail}")
    return failures


def test_no_operation_answers_with_a_server_error(db, no_network, wsgi_app, world, admin_token, settings):
    settings.DEBUG_PROPAGATE_EXCEPTIONS = True  # a 500 fails with its traceback, not as a bare status
    headers = {"Authorization": f"Token {admin_token}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app, headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 60
    started = time.monotonic()
    failures: list[str] = []
    answered: dict[str, set[int]] = {}
    for operation in operations:
        if operation.label in EXCLUDED:
            continue
        failures.extend(_run_operation(operation, headers, answered.setdefault(operation.label, set())))
    elapsed = time.monotonic() - started
    assert not failures, f"{len(failures)} server errors in {elapsed:.0f} s:\n\n" + "\n\n".join(failures)
    succeeded = sorted(label for label, codes in answered.items() if any(200 <= code < 300 for code in codes))
    print(
        f"{len(operations)} operations in {elapsed:.0f} s; {len(succeeded)} answered 2xx at least once; never:",
        {label: sorted(codes) for label, codes in answered.items() if label not in succeeded},
    )
    # the token authenticates and the world's ids get cases past the 404s (not only 401/403/404 seen)
    assert len(succeeded) >= len(operations) // 3, sorted(set(answered) - set(succeeded))


def test_the_fuzzer_reports_a_server_error(
    db, no_network, wsgi_app, world, admin_token, settings, monkeypatch
):
    """The harness above can fail: an operation that raises is reported with its traceback."""
    from annotation.api import views

    def broken(self: Any, request: Any) -> Any:
        raise RuntimeError("deliberately broken for the harness test")

    monkeypatch.setattr(views.SourceListApi, "get", broken)
    settings.DEBUG_PROPAGATE_EXCEPTIONS = True
    headers = {"Authorization": f"Token {admin_token}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app, headers=headers)
    operation = next(
        result.ok() for result in schema.get_all_operations() if result.ok().label == "GET /api/sources/"
    )
    failures = _run_operation(operation, headers)
    assert failures
    assert all(
        f.startswith("GET /api/sources/ [") and "RuntimeError: deliberately broken" in f for f in failures
    )


def test_slot_operations_as_the_slots_reviewer_and_a_valid_decision(
    db, no_network, wsgi_app, world, role_users, settings
):
    """The admin above holds the key and no slot, so the review slot operations only ever answered 403 to it
    (how a 500 on every valid decision went unseen): fuzz them as the matrix probe reviewer, who holds a slot
    with every probe answered blind, and send the valid decision body too — a 201, never a 5xx."""
    settings.DEBUG_PROPAGATE_EXCEPTIONS = True
    headers = {"Authorization": f"Token {Token.objects.create(user=role_users['probe_reviewer']).key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app, headers=headers)
    operations = [
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path.startswith("/api/review/slots/")
    ]
    assert len(operations) >= 6
    failures: list[str] = []
    answered: dict[str, set[int]] = {}
    for operation in operations:
        failures.extend(_run_operation(operation, headers, answered.setdefault(operation.label, set())))
    assert not failures, "\n\n".join(failures)
    decision = next(
        op for op in operations if op.label.endswith("/decision/") and op.method.upper() == "POST"
    )
    case = decision.Case(
        path_parameters={"slot_id": world.review_slot, "logical_probe_id": world.review_probe},
        body=world.review_decision_body,
        media_type="application/json",
    )
    response = case.call_and_validate(headers=headers, checks=[not_a_server_error])
    assert response.status_code == 201, response.text
    assert response.json()["outcome"] == "pending"
