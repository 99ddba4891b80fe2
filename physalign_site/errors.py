"""One error type for business rules, rendered the same way by the API and by htmx views."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    """A refused operation: ``message`` for people, ``code`` for programs, ``extra`` for details."""

    status_code = 400

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        extra: dict[str, Any] | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.extra = extra or {}
        if status is not None:
            self.status_code = status

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, "extra": self.extra}


class ConflictError(ApplicationError):
    status_code = 409


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):  # Django would answer with an HTML 400 page
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {
                "message": f"The request body is larger than the limit of {limit} bytes.",
                "code": "request_too_large",
                "extra": {"limit_bytes": limit},
            },
            status=413,
        )
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return Response({"message": str(exc), "code": "too_many_fields", "extra": {}}, status=400)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, drf_exceptions.ValidationError):
        response.data = {
            "message": "The request is invalid.",
            "code": "validation_error",
            "extra": {"fields": response.data},
        }
    elif isinstance(exc, drf_exceptions.APIException):
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else response.data
        response.data = {
            "message": str(detail),
            "code": getattr(exc.detail, "code", exc.default_code),
            "extra": {},
        }
    return response
