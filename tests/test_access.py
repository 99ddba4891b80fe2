"""The one role check of pages (``physalign_site.access.require``) and of the API
(``physalign_site.api.role_permission``): anonymous → the login page (401 for the API), refused → 403,
allowed → the view; URL arguments reach the check; an object check runs after the object is found."""

from __future__ import annotations

import pytest
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.urls import include, path, reverse
from django.views.decorators.http import require_POST
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from annotation.permissions import can_read_pass
from physalign_site.access import require
from physalign_site.api import role_permission
from review.permissions import can_view_agreement

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


@require(can_view_agreement)
def agreement_page(request):
    return HttpResponse("agreement for " + request.user.get_username())


@require(can_read_pass, kwargs=("pass_no",))
def pass_page(request, problem_id: str, pass_no: int):
    return HttpResponse(f"{problem_id} pass {pass_no}")


@login_required
@require_POST
@require(can_view_agreement)
def agreement_action(request):
    return HttpResponse("done")


class PassApi(APIView):
    permission_classes = [role_permission(can_read_pass, kwargs=("pass_no",), message="Not your pass.")]

    def get(self, request, pass_no: int):
        return Response({"pass_no": pass_no})


class Box:
    def __init__(self, owner_id: int) -> None:
        self.owner_id = owner_id


BOXES: dict[int, Box] = {}


class BoxApi(APIView):
    permission_classes = [role_permission(on_object=lambda user, box: box.owner_id == user.pk)]

    def get(self, request, box_id: int):
        if box_id not in BOXES:
            raise Http404("No such box.")
        box = BOXES[box_id]
        self.check_object_permissions(request, box)
        return Response({"owner_id": box.owner_id})


urlpatterns = [
    path("access-test/agreement/", agreement_page),
    path("access-test/<str:problem_id>/passes/<int:pass_no>/", pass_page),
    path("access-test/agreement/do/", agreement_action),
    path("api/access-test/passes/<int:pass_no>/", PassApi.as_view()),
    path("api/access-test/boxes/<int:box_id>/", BoxApi.as_view()),
    path("", include("physalign_root.urls")),
]


def test_anonymous_is_sent_to_the_login_page(client):
    response = client.get("/access-test/agreement/")
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next=/access-test/agreement/"


def test_a_user_without_the_role_gets_403(client, role_users, django_user_model):
    client.force_login(role_users["probe_reviewer"])
    assert client.get("/access-test/agreement/").status_code == 403
    client.force_login(django_user_model.objects.create_user(username="nobody", password="pw-nobody"))
    assert client.get("/access-test/agreement/").status_code == 403


def test_a_user_with_the_role_gets_the_page(client, role_users):
    client.force_login(role_users["adjudicator"])
    response = client.get("/access-test/agreement/")
    assert response.status_code == 200
    assert response.content.decode() == "agreement for user_adjudicator"


def test_url_arguments_reach_the_check(client, role_users):
    client.force_login(role_users["source_reviewer"])  # passes 1-4, never the solution pass
    assert client.get("/access-test/P1/passes/2/").content.decode() == "P1 pass 2"
    assert client.get("/access-test/P1/passes/5/").status_code == 403
    client.force_login(role_users["annotator"])
    assert client.get("/access-test/P1/passes/5/").status_code == 200


def test_a_wrong_method_is_405_before_the_role_is_looked_at(client, role_users, django_user_model):
    assert client.get("/access-test/agreement/do/").status_code == 302  # anonymous: still the login page
    client.force_login(django_user_model.objects.create_user(username="nobody", password="pw-nobody"))
    assert client.get("/access-test/agreement/do/").status_code == 405
    assert client.post("/access-test/agreement/do/").status_code == 403
    client.force_login(role_users["admin"])
    assert client.post("/access-test/agreement/do/").content.decode() == "done"


def test_the_decorated_view_keeps_its_name():
    assert (agreement_page.__name__, pass_page.__name__) == ("agreement_page", "pass_page")


def test_role_permission_passes_url_arguments_and_its_message(role_users):
    api = APIClient()
    response = api.get("/api/access-test/passes/5/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    api.force_login(role_users["source_reviewer"])
    assert api.get("/api/access-test/passes/1/").json() == {"pass_no": 1}
    refused = api.get("/api/access-test/passes/5/")
    assert refused.status_code == 403
    assert refused.json() == {"message": "Not your pass.", "code": "permission_denied", "extra": {}}


def test_role_permission_checks_the_object_after_it_is_found(role_users, monkeypatch):
    owner, other = role_users["annotator"], role_users["admin"]
    monkeypatch.setitem(BOXES, 1, Box(owner.pk))
    api = APIClient()
    api.force_login(other)
    assert api.get("/api/access-test/boxes/2/").status_code == 404  # missing stays a 404, for anyone
    assert api.get("/api/access-test/boxes/1/").status_code == 403
    api.force_login(owner)
    assert api.get("/api/access-test/boxes/1/").json() == {"owner_id": owner.pk}
