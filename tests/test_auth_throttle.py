"""Login throttling (django-axes): the login page and the token endpoint refuse a username + address
pair after AXES_FAILURE_LIMIT failures, even with the right password, and nobody else."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from physalign_site.auth import lockout_message
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

LOCKOUT = (
    "Too many failed logins for this account from your address: logins are refused for 15 minutes "
    "after the last try. Wait, or ask an administrator to unlock the account."
)


@pytest.fixture
def victim(django_user_model):
    return make_user(django_user_model, "victim", "annotator")  # password "pw-victim"


@pytest.fixture
def bystander(django_user_model):
    return make_user(django_user_model, "bystander", "annotator")


def login(client, username: str, password: str, address: str = "127.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in_as(client) -> str | None:
    return client.session.get("_auth_user_id")


def test_the_settings_and_the_message_agree():
    assert lockout_message() == LOCKOUT


def test_login_page_refuses_the_thirtieth_try_with_the_right_password(client, victim, bystander):
    statuses = [login(client, "victim", f"wrong-{n}").status_code for n in range(29)]
    assert statuses == [200] * 9 + [429] * 20  # the 10th failure locks the pair
    refused = login(client, "victim", "pw-victim")
    assert refused.status_code == 429
    assert refused["Retry-After"] == "900"
    assert LOCKOUT in refused.content.decode()
    assert logged_in_as(client) is None
    assert AccessAttempt.objects.get(username="victim").failures_since_start == 30

    other = login(client, "bystander", "pw-bystander")  # same address, another account
    assert other.status_code == 302 and other["Location"] == "/"
    assert logged_in_as(client) == str(bystander.pk)


def test_the_lock_is_per_address(client, victim):
    for n in range(10):
        login(client, "victim", f"wrong-{n}", address="10.0.0.1")
    assert login(client, "victim", "pw-victim", address="10.0.0.1").status_code == 429
    elsewhere = login(client, "victim", "pw-victim", address="10.0.0.2")
    assert elsewhere.status_code == 302
    assert logged_in_as(client) == str(victim.pk)


def test_the_lock_lifts_after_the_cool_off(client, victim):
    for n in range(10):
        login(client, "victim", f"wrong-{n}")
    assert login(client, "victim", "pw-victim").status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert login(client, "victim", "pw-victim").status_code == 302
    assert logged_in_as(client) == str(victim.pk)


def test_a_successful_login_resets_the_count(client, victim):
    for n in range(9):
        login(client, "victim", f"wrong-{n}")
    assert login(client, "victim", "pw-victim").status_code == 302
    client.logout()
    assert [login(client, "victim", f"again-{n}").status_code for n in range(9)] == [200] * 9
    assert login(client, "victim", "pw-victim").status_code == 302


def token(client: APIClient, username: str, password: str):
    return client.post("/api/auth/token/", {"username": username, "password": password}, format="json")


def test_token_endpoint_refuses_the_thirtieth_try_with_a_json_429(victim, bystander):
    client = APIClient()
    statuses = [token(client, "victim", f"wrong-{n}").status_code for n in range(29)]
    assert statuses == [400] * 9 + [429] * 20
    refused = token(client, "victim", "pw-victim")
    assert refused.status_code == 429
    assert refused.json() == {
        "message": LOCKOUT,
        "code": "locked_out",
        "extra": {"failure_limit": 10, "retry_after_seconds": 900},
    }
    assert not Token.objects.filter(user=victim).exists()

    other = token(client, "bystander", "pw-bystander")
    assert other.status_code == 200
    assert other.json() == {"token": Token.objects.get(user=bystander).key}


def test_token_endpoint_failures_count_for_the_login_page_too(client, victim):
    api = APIClient()
    for n in range(10):
        token(api, "victim", f"wrong-{n}")
    assert login(client, "victim", "pw-victim").status_code == 429
    assert logged_in_as(client) is None


def test_a_form_encoded_token_request_is_counted_the_same_way(victim):
    client = APIClient()
    for n in range(10):
        client.post("/api/auth/token/", {"username": "victim", "password": f"wrong-{n}"})
    refused = client.post("/api/auth/token/", {"username": "victim", "password": "pw-victim"})
    assert refused.status_code == 429 and refused.json()["code"] == "locked_out"
