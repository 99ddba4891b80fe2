"""Site-wide middleware."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from .errors import ApplicationError


class ApplicationErrorMiddleware:
    """An ``ApplicationError`` that leaves an HTML or htmx view becomes an error page with its message
    and status (e.g. a malformed ``?from=`` is a 400 that says which parameter), never a 500.
    API views render theirs as JSON in ``physalign_site.errors.api_exception_handler`` first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, ApplicationError):
            return None
        response = TemplateResponse(
            request,
            "physalign_site/error.html",
            {"error": exception, "status": exception.status_code},
            status=exception.status_code,
        )
        return response.render()
