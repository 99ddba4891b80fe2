"""Site-wide middleware."""

from __future__ import annotations

import sys
from collections.abc import Callable

from django.core.exceptions import TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.views import defaults

from .db import database_unavailable
from .errors import ApplicationError
from .params import require_storable, require_storable_path

API_PREFIX = "/api/"


def error_page(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    """The HTML page of a refused request: its message and status."""
    response = TemplateResponse(
        request,
        "physalign_site/error.html",
        {"error": error, "status": error.status_code},
        status=error.status_code,
    )
    return response.render()


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
        return error_page(request, exception)


class StorableInputMiddleware:
    """The one place that checks the text of every request before any view reads it: a NUL character or
    an unpaired surrogate (what PostgreSQL cannot store, and a ``DataError`` — a 500 — wherever a view
    filters or saves by it) in the URL path, in any query parameter or in any form field is a 400 that
    names the field (``physalign_site.params.require_storable``): the error page for pages, the API's
    error JSON (``{"message", "code", "extra"}``, as ``physalign_site.errors``) under ``/api/``.

    Only text is checked: the content of uploaded files (``request.FILES``) may hold any byte. API form
    bodies are checked by the API's own parsers (``physalign_site.parsers``), which read the body with
    the API's size limits and error shape; here only their path and query string are."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path_info.startswith(API_PREFIX)
        try:
            require_storable_path(request.path_info)
            require_storable(request.GET, where="query parameter")
            if not api and request.method == "POST":
                require_storable(request.POST, where="form field")
        except ApplicationError as error:
            if api:
                return JsonResponse(error.as_dict(), status=error.status_code)
            return error_page(request, error)
        except TooManyFieldsSent as error:
            if not api:
                raise  # Django's own 400, as when a view reads the query string
            return JsonResponse({"message": str(error), "code": "too_many_fields", "extra": {}}, status=400)
        return self.get_response(request)


RETRY_AFTER_SECONDS = 2
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class DatabaseUnavailableMiddleware:
    """A view whose database went away under it (``physalign_site.db.database_unavailable``: a terminated
    PostgreSQL backend, a restarted server, a locked SQLite file) never answers 500. A read (GET, HEAD,
    OPTIONS) runs once more on a fresh connection; a write, or a read that fails again, answers 503 with
    ``Retry-After``: nothing of it was committed (a view's writes are one transaction, rolled back with the
    connection), so the client may send it again — the workspace's autosave does, with its If-Match."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_unavailable(exception):
            return None
        match = request.resolver_match
        if request.method in SAFE_METHODS and match is not None:
            try:
                return match.func(request, *match.args, **match.kwargs)
            except Exception as again:  # noqa: BLE001 - the retry's own failure decides below
                if not database_unavailable(again):
                    raise
        return database_unavailable_response(request)


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    """503 with ``Retry-After``: the API's error JSON under ``/api/``, the error page elsewhere."""
    error = ApplicationError(
        "The database did not answer (its connection was lost); nothing was saved. Try again in a moment.",
        code="database_unavailable",
        extra={"retry_after_seconds": RETRY_AFTER_SECONDS},
        status=503,
    )
    if request.path_info.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse(error.as_dict(), status=error.status_code)
    else:
        response = error_page(request, error)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 handler: a lost database connection that a middleware (not a view) met is the same 503 as in
    ``DatabaseUnavailableMiddleware``; anything else is Django's own 500 page."""
    error = sys.exc_info()[1]
    if error is not None and database_unavailable(error):
        return database_unavailable_response(request)
    return defaults.server_error(request)
