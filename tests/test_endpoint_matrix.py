"""Every endpoint × every role → expected status code (rows live in ``tests/endpoint_matrix``)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

import tests.endpoint_matrix as matrix
from tests.endpoint_matrix import ANON, NOROLE, ROLES, Case, World, value_of

AREAS = [
    importlib.import_module(f"{matrix.__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(matrix.__path__), key=lambda info: info.name)
    if info.name.endswith("_cases")
]
CASES: list[Case] = [case for area in AREAS for case in area.CASES]

PARAMS = [
    pytest.param(case, role, id=f"{case.method.upper()} {case.name} [{role}]")
    for case in CASES
    for role in ROLES
    if role in case.expected
]


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


@pytest.fixture
def users(role_users, django_user_model) -> dict[str, Any]:
    everyone: dict[str, Any] = dict(role_users)
    everyone[ANON] = None
    everyone[NOROLE] = django_user_model.objects.create_user(username="user_no_role", password="pw-none")
    assert not Group.objects.filter(user=everyone[NOROLE]).exists()
    return everyone


@pytest.fixture
def world(users: dict[str, Any]) -> World:
    world = World()
    for area in AREAS:
        area.populate(world, users)
    return world


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "role"), PARAMS)
def test_endpoint_role_matrix(case: Case, role: str, world: World, users: dict[str, Any]) -> None:
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
    expected = case.expected[role]
    detail = getattr(response, "data", None) if response.status_code != expected else None
    assert response.status_code == expected, f"{case.method.upper()} {url} as {role}: {detail!r}"
    if expected == 302 and role == ANON:
        assert "/accounts/login/" in response["Location"]
