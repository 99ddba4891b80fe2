"""Routes every request that names a problem (or one of its LLM drafts) through the one independence rule,
``annotation.double.blind``: a second annotator asking for anything of the first annotation of a problem they
annotate a second time gets a 403 (the API's error JSON under ``/api/``, the error page elsewhere); the problem's
own page sends them to their own annotation of it.

It runs for pages and API alike, whichever way the API request is signed in (session or token), before the view:
no view can forget it. Allowed through: the problem's images (the second annotator annotates them) and
``annotation.double``'s own pages and API (the second annotator's own documents)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect

from physalign_site.errors import ApplicationError
from physalign_site.middleware import error_page

from .blind import hidden_problem_ids, require_first_annotation_visible

API_PREFIX = "/api/"
OPEN_NAMESPACES = {"double", "double-api"}  # the second annotator's own annotation
OPEN_VIEWS = {"annotation:image_file"}  # the images both annotators annotate
REDIRECTED_VIEWS = {"annotation:problem_detail": "double:problem"}


def _draft_problem_id(draft_id: Any) -> str | None:
    from annotation.models import LLMDraft

    return LLMDraft.objects.filter(pk=draft_id).values_list("parent__problem_id", flat=True).first()


# URL keyword arguments that name a problem, and how to find which
PROBLEM_OF: dict[str, Callable[[Any], str | None]] = {
    "problem_id": lambda value: str(value),
    "draft_id": _draft_problem_id,
}


def _request_user(request: HttpRequest) -> Any:
    """The signed-in user: the session's, or an API token's (DRF authenticates tokens only inside the view)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user
    header = request.headers.get("Authorization", "")
    if request.path_info.startswith(API_PREFIX) and header.startswith("Token "):
        from rest_framework.authtoken.models import Token

        token = Token.objects.select_related("user").filter(key=header.removeprefix("Token ").strip()).first()
        if token is not None and token.user.is_active:
            return token.user
    return None


class FirstAnnotationBlind:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Any, view_args: Any, view_kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        keys = [key for key in PROBLEM_OF if key in view_kwargs]
        match = request.resolver_match
        if not keys or match is None or match.namespace in OPEN_NAMESPACES or match.view_name in OPEN_VIEWS:
            return None
        user = _request_user(request)
        if user is None or not hidden_problem_ids(user):
            return None
        for key in keys:
            problem_id = PROBLEM_OF[key](view_kwargs[key])
            if problem_id is None:
                continue
            if match.view_name in REDIRECTED_VIEWS and problem_id in hidden_problem_ids(user):
                return redirect(REDIRECTED_VIEWS[match.view_name], problem_id=problem_id)
            try:
                require_first_annotation_visible(user, problem_id)
            except ApplicationError as error:
                if request.path_info.startswith(API_PREFIX):
                    return JsonResponse(error.as_dict(), status=error.status_code)
                return error_page(request, error)
        return None
