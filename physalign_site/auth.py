"""Login throttling glue for django-axes (settings ``AXES_*``) and the token endpoint that uses it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from .api import errors
from .parsers import FormParser, JSONParser


def client_ip(request: HttpRequest) -> str | None:
    """The address failures are counted against: ``REMOTE_ADDR``, or, behind our proxy
    (``DJANGO_BEHIND_PROXY``), the address that proxy appended to ``X-Forwarded-For`` (the last one:
    anything before it came from the client and proves nothing)."""
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR")


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        f"Too many failed logins for this account from your address: logins are refused for {minutes} "
        f"minutes after the last try. Wait, or ask an administrator to unlock the account."
    )


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict[str, Any] | None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: 429 with the message, as JSON on the API and as the login page's
    locked-out variant elsewhere."""
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    headers = {"Retry-After": str(seconds)}
    if request.path.startswith("/api/"):
        return JsonResponse(
            {
                "message": lockout_message(),
                "code": "locked_out",
                "extra": {"failure_limit": settings.AXES_FAILURE_LIMIT, "retry_after_seconds": seconds},
            },
            status=429,
            headers=headers,
        )
    response = TemplateResponse(
        request, "registration/locked_out.html", {"message": lockout_message()}, status=429, headers=headers
    )
    return response.render()


class ObtainAuthTokenApi(ObtainAuthToken):
    """DRF's ``obtain_auth_token`` with two changes: ``authenticate()`` gets the Django request, so
    django-axes counts the failure on the request its middleware answers (a lockout is a JSON 429, not
    "unable to log in"), and the body goes through the project's parsers (size and JSON limits)."""

    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "request": self.request._request}

    @extend_schema(
        operation_id="auth_token_create",
        responses={
            200: inline_serializer("AuthTokenOutput", {"token": serializers.CharField()}),
            # 400: wrong credentials or an invalid body; 401: a request carrying an unknown token;
            # 429: the account is locked out from this address (django-axes)
            **errors(400, 401, 429),
        },
        description="A token for `Authorization: Token <token>`, given the username and password. Too many "
        "failures lock the account out from your address for a while (429, `Retry-After`).",
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().post(request, *args, **kwargs)
