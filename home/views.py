"""The page after login: each role's work, with counts and links (admins: the pipeline board)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from physalign_site.roles import ADJUDICATOR, ADMIN, ANNOTATOR, PROBE_REVIEWER, SOURCE_REVIEWER, user_roles
from review.permissions import is_key_holder

from . import selectors


@login_required
@require_GET
def home(request: HttpRequest) -> TemplateResponse:
    """Sections follow the roles the user holds (an admin sees the board; every other section is one click
    away in the menus), so a user with two roles sees both kinds of work."""
    roles = user_roles(request.user)
    context: dict[str, object] = {"nav_section": "home", "has_role": bool(roles)}
    if ADMIN in roles:
        context["board"] = selectors.pipeline_board()
        context["assignments"] = selectors.assignment_overview(today=timezone.localdate())
    if ANNOTATOR in roles:
        context["annotator"] = selectors.annotator_home(request.user, today=timezone.localdate())
    if SOURCE_REVIEWER in roles:
        context["source_reviewer"] = selectors.source_reviewer_home(request.user)
    if roles & {PROBE_REVIEWER, ADJUDICATOR}:
        context["reviewer"] = selectors.reviewer_home(request.user)
        context["key_holder"] = is_key_holder(request.user)
        context["is_adjudicator"] = ADJUDICATOR in roles
        context["is_probe_reviewer"] = PROBE_REVIEWER in roles
    return TemplateResponse(request, "home/home.html", context)
