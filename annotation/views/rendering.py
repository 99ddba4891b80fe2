"""What every annotation page shares: a full page, or only its partial for htmx."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

PROBLEMS_PER_PAGE = 50


RECENT_IMPORTS = 20


ANNOTATION_PASSES = (1, 2, 3, 4)


ALL_PASSES = (1, 2, 3, 4, 5)


def is_partial_request(request: HttpRequest) -> bool:
    """An htmx swap wants the fragment; a history restore (cache miss) needs the full page."""
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    return bool(htmx) and not htmx.history_restore_request


def page_render(
    request: HttpRequest, template: str, partial: str, context: dict[str, Any]
) -> TemplateResponse:
    name = f"{template}#{partial}" if is_partial_request(request) else template
    response = TemplateResponse(request, name, context)
    # The same URL answers with a fragment or a page: caches must keep them apart.
    patch_vary_headers(response, ("HX-Request",))
    return response
