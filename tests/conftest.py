from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from physalign_site.roles import ALL_ROLES

TESTS = Path(__file__).resolve().parent
FUZZ_FILES = {TESTS / "test_html_fuzz.py", TESTS / "test_api_fuzz.py"}
# Run in the separate harness venv (scripts/harness_env.sh: torch, lmms-eval, VLMEvalKit, ~7.5 GB) only when
# PHYSALIGN_HARNESS_PYTHON names it; otherwise they are deselected, never collected as skips.
HARNESS_FILES = {TESTS / "probes" / "test_exports_in_harnesses.py"}


def pytest_collection_modifyitems(config, items):
    """Every test under tests/browser/ is ``browser`` (it drives Chromium), the fuzzers' tests are ``fuzz``:
    ``make test-fast`` leaves both out (``-m "not browser and not fuzz"``), ``make test`` runs everything."""
    if not os.environ.get("PHYSALIGN_HARNESS_PYTHON"):
        harness = [item for item in items if Path(str(item.path)).resolve() in HARNESS_FILES]
        if harness:
            config.hook.pytest_deselected(items=harness)
            items[:] = [item for item in items if item not in harness]
    for item in items:
        path = Path(str(item.path)).resolve()
        if TESTS / "browser" in path.parents:
            item.add_marker(pytest.mark.browser)
        if path in FUZZ_FILES:
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture(autouse=True)
def _isolated_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def make_user(django_user_model, username: str, *roles: str):
    user = django_user_model.objects.create_user(username=username, password="pw-" + username)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])  # transactional tests flush groups
    return user


@pytest.fixture
def role_users(db, django_user_model) -> dict[str, object]:
    """One user per role, keyed by role name (``admin`` is a group member, not a superuser)."""
    return {role: make_user(django_user_model, f"user_{role}", role) for role in ALL_ROLES}


@pytest.fixture
def key_holder(db, django_user_model):
    """An admin with the key-holder permission (``probes.view_private_mapping``): may know targets."""
    from django.contrib.auth.models import Permission

    user = make_user(django_user_model, "user_key_holder", "admin")
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return django_user_model.objects.get(pk=user.pk)


@pytest.fixture
def annotator(role_users):
    return role_users["annotator"]


@pytest.fixture
def source_reviewer(role_users):
    return role_users["source_reviewer"]


@pytest.fixture
def admin_user_role(role_users):
    return role_users["admin"]


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def eager(settings):
    from physalign_site.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
