"""The admins' assignments page: filter problems, see their annotator and source reviewer (with due dates), assign
the ticked ones or every matching one to a user or evenly across several, unassign, and make a source's
assignment strict. Thin: forms read the request, ``services`` write, ``selectors`` read."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_list_param

from ..models import ParentProblem, Source
from .forms import AssignmentActionForm, AssignmentFilterForm, AssignmentStrictForm
from .permissions import can_manage_assignments
from .selectors import (
    ROLE_LABELS,
    ROLES,
    AssignmentFilters,
    assignable_users,
    matching_problem_ids,
    matching_problems,
)
from .services import AssignOutcome, assignment_assign, assignment_unassign, source_assignment_strict_set

PER_PAGE = 100
RULES = (
    "One user chosen: every problem goes to them. Several (or everyone holding the role): evenly, round robin "
    "in problem-id order, the first users (by username) taking one more when it does not divide.",
    "Assigning replaces the problem's assignee in that role; the due date is optional.",
    "Nobody reviews their own pass: a problem's annotator cannot be its source reviewer, and a reviewer never "
    "decides a pass they edited or saved a version of, or whose problem they are assigned to annotate.",
    "Open source (the default): assignment orders the work, it locks nothing; every annotator may still edit "
    "every problem, assigned or not.",
    "Strict source: only the problem's assigned annotator (and admins) may save, submit or revert its passes; "
    "other annotators may still read them, and a problem nobody is assigned to is editable by admins only "
    "until it is assigned.",
)


def _facets() -> dict[str, Any]:
    sources = list(Source.objects.order_by("name").values_list("pk", "name", "assignment_strict"))
    users = {role: list(assignable_users(role)) for role in ROLES}
    everyone = sorted({u.pk: u for group in users.values() for u in group}.values(), key=lambda u: u.username)
    return {
        "sources": sources,
        "domains": list(
            ParentProblem.objects.exclude(domain="")
            .order_by("domain")
            .values_list("domain", flat=True)
            .distinct()
        ),
        "users": users,
        "everyone": everyone,
    }


def _filter_form(query: Any, facets: dict[str, Any]) -> AssignmentFilterForm:
    return AssignmentFilterForm(
        query,
        sources=[(pk, name) for pk, name, _ in facets["sources"]],
        domains=facets["domains"],
        users=[(u.pk, u.username) for u in facets["everyone"]],
    )


@require_http_methods(["GET", "POST"])
@require(can_manage_assignments)
def assignments(request: HttpRequest) -> HttpResponse:
    facets = _facets()
    filters = _filter_form(request.GET, facets).filters()
    error, status = "", 200
    if request.method == "POST":
        try:
            if request.POST.get("form") == "strict":
                message = _strict(request)
            else:
                message = _act(request, filters, facets)
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
        else:
            messages.success(request, message)
            query = urlencode(filters.as_query())
            return redirect(reverse("assignments:page") + (f"?{query}" if query else ""))
    return TemplateResponse(
        request, "annotation/assignments.html", _context(request, filters, facets, error), status=status
    )


def _context(request: HttpRequest, filters: AssignmentFilters, facets: dict[str, Any], error: str) -> dict:
    page = Paginator(matching_problems(filters), PER_PAGE).get_page(request.GET.get("page"))
    rows = []
    for problem in page.object_list:
        held = {a.role: a for a in problem.assignments.all()}
        rows.append(
            {"problem": problem, "annotator": held.get("annotator"), "reviewer": held.get("source_reviewer")}
        )
    posted = request.POST if request.method == "POST" and error else None
    return {
        "filter_form": _filter_form(request.GET, facets),
        "filter_query": urlencode(filters.as_query()),
        "filtered": not filters.is_empty,
        "page": page,
        "rows": rows,
        "users": [
            {"role": role, "label": ROLE_LABELS[role], "users": facets["users"][role]} for role in ROLES
        ],
        "sources": [{"pk": pk, "name": name, "strict": strict} for pk, name, strict in facets["sources"]],
        "roles": [(role, ROLE_LABELS[role]) for role in ROLES],
        "posted": _posted(posted),
        "error": error,
        "rules": RULES,
        "today": timezone.localdate(),
        "nav_section": "assignments",
    }


def _posted(data: Any) -> dict[str, Any]:
    """What the refused form held, to show it again as it was (nothing posted: the defaults)."""
    if data is None:
        return {"role": "annotator", "users": set(), "ticked": set(), "due_date": ""}
    return {
        "role": data.get("role", "annotator"),
        "users": set(data.getlist("user")),
        "ticked": set(data.getlist("problem")),
        "due_date": data.get("due_date", ""),
        "everyone": bool(data.get("everyone")),
    }


def _form_error(form: Any) -> ApplicationError:
    texts = [str(e) for e in form.non_field_errors()]
    texts += [
        f"{name}: {' '.join(str(e) for e in errs)}" for name, errs in form.errors.items() if name != "__all__"
    ]
    return ApplicationError(" ".join(texts), code="assignment_form_invalid")


def _act(request: HttpRequest, filters: AssignmentFilters, facets: dict[str, Any]) -> str:
    ticked = int_list_param(request.POST.getlist("problem"), name="problem")
    form = AssignmentActionForm(request.POST, user_ids=[u.pk for u in facets["everyone"]], ticked=ticked)
    if not form.is_valid():
        raise _form_error(form)
    data = form.cleaned_data
    role = data["role"]
    parent_ids = ticked if data["scope"] == "selected" else matching_problem_ids(filters)
    if data["action"] == "unassign":
        removed = assignment_unassign(parent_ids=parent_ids, role=role, actor=request.user)
        return (
            f"Unassigned the {ROLE_LABELS[role].lower()} of {removed} problem{'s' if removed != 1 else ''}."
        )
    if data["everyone"]:
        users = list(assignable_users(role))
    else:
        users = list(get_user_model().objects.filter(pk__in=data["user"]).order_by("username"))
    outcome = assignment_assign(
        parent_ids=parent_ids, role=role, users=users, actor=request.user, due_date=data["due_date"]
    )
    return _outcome_message(outcome, data["due_date"])


def _outcome_message(outcome: AssignOutcome, due_date: Any) -> str:
    total = outcome.changed + outcome.unchanged
    shares = ", ".join(f"{name} {count}" for name, count in outcome.per_user.items())
    due = f", due {due_date.isoformat()}" if due_date else ""
    kept = f" ({outcome.unchanged} already so)" if outcome.unchanged else ""
    return (
        f"Assigned {total} problem{'s' if total != 1 else ''} as {ROLE_LABELS[outcome.role].lower()}: "
        f"{shares}{due}{kept}."
    )


def _strict(request: HttpRequest) -> str:
    form = AssignmentStrictForm(request.POST)
    if not form.is_valid():
        raise _form_error(form)
    source = Source.objects.filter(pk=form.cleaned_data["source"]).first()
    if source is None:
        raise ApplicationError("No such source.", code="source_not_found", status=404)
    source = source_assignment_strict_set(
        source=source, strict=form.cleaned_data["strict"], actor=request.user
    )
    if source.assignment_strict:
        return (
            f"{source.name}: strict assignment. Only a problem's assigned annotator (and admins) may edit its "
            "passes; unassigned problems are editable by admins only until assigned."
        )
    return f"{source.name}: open assignment. Every annotator may edit its problems, assigned or not."
