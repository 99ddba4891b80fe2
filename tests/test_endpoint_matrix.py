"""Every endpoint × every role → expected status code (rows live in ``tests/endpoint_matrix``)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from rest_framework.test import APIClient

import tests.endpoint_matrix as matrix
from tests.conftest import make_user
from tests.endpoint_matrix import ANON, KEY, NOROLE, ROLES, Case, World, expected_for, value_of

AREAS = [
    importlib.import_module(f"{matrix.__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(matrix.__path__), key=lambda info: info.name)
    if info.name.endswith("_cases")
]
CASES: list[Case] = [case for area in AREAS for case in area.CASES]

AREA_PARAMS = [pytest.param(area, id=area.__name__.rsplit(".", 1)[-1]) for area in AREAS]


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


@pytest.fixture
def users(role_users, django_user_model) -> dict[str, Any]:
    everyone: dict[str, Any] = dict(role_users)
    everyone[ANON] = None
    everyone[NOROLE] = django_user_model.objects.create_user(username="user_no_role", password="pw-none")
    assert not Group.objects.filter(user=everyone[NOROLE]).exists()
    everyone[KEY] = make_user(django_user_model, "user_key_holder", "admin")
    everyone[KEY].user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    assert not everyone["admin"].has_perm("probes.view_private_mapping")
    return everyone


@pytest.fixture
def world(users: dict[str, Any]) -> World:
    world = World()
    for area in AREAS:
        area.populate(world, users)
    return world


def _check(case: Case, role: str, world: World, users: dict[str, Any]) -> str | None:
    """One row × role: the mismatch message, or None when the status code is the expected one."""
    client = APIClient()
    if users[role] is not None:
        client.force_login(users[role])
    url = value_of(case.url, world)
    kwargs: dict[str, Any] = {}
    body = value_of(case.body, world)
    if body is not None or case.method in ("post", "put", "patch"):
        kwargs["data"] = body if body is not None else {}
        if case.fmt:
            kwargs["format"] = case.fmt
    headers = value_of(case.headers, world)
    if headers:
        kwargs["headers"] = headers
    response = getattr(client, case.method)(url, **kwargs)
    expected = expected_for(case.expected, role)
    if role == ANON and expected == 403 and url.startswith("/api/"):
        # DRF answers an unauthenticated API call with the token challenge (TokenAuthentication comes first)
        expected = 401
        if response.status_code == 401 and response.get("WWW-Authenticate") != "Token":
            return f"{case.method.upper()} {case.name} ({url}) as {role}: 401 without WWW-Authenticate: Token"
    if response.status_code != expected:
        detail = getattr(response, "data", None)
        return (
            f"{case.method.upper()} {case.name} ({url}) as {role}: expected {expected}, got "
            f"{response.status_code} {detail!r}"
        )
    if expected == 302 and role == ANON and "/accounts/login/" not in response["Location"]:
        return f"{case.method.upper()} {case.name} ({url}) as {role}: redirected to {response['Location']}"
    if case.secrets is not None and response.status_code == 200:
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode("utf-8", "replace")
        secrets = value_of(case.secrets, world)
        assert secrets, f"{case.name}: no private strings to look for"
        shown = [s for s in secrets if s in text]
        if role == KEY and len(shown) != len(secrets):
            return (
                f"GET {case.name} ({url}) as {role}: the key holder is not shown {set(secrets) - set(shown)}"
            )
        if role != KEY and shown:
            return f"{case.method.upper()} {case.name} ({url}) as {role}: private strings shown: {shown}"
    return None


@pytest.mark.django_db
@pytest.mark.parametrize("area", AREA_PARAMS)
def test_endpoint_role_matrix(area: Any, world: World, users: dict[str, Any]) -> None:
    """Every row of the area for every role it names. The world is built once per area; each request runs
    inside a savepoint that is rolled back, so every row × role sees exactly the populated state."""
    mismatches = []
    checked = 0
    for case in area.CASES:
        for role in ROLES:
            if expected_for(case.expected, role) is None:
                continue
            savepoint = transaction.savepoint_create()
            try:
                mismatch = _check(case, role, world, users)
            finally:
                transaction.savepoint_rollback(savepoint)
            checked += 1
            if mismatch:
                mismatches.append(mismatch)
    assert checked, "the area has no rows"
    assert not mismatches, f"{len(mismatches)} of {checked} row × role checks failed:\n" + "\n".join(
        mismatches
    )
