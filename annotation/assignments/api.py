"""The assignments API (admins only):

- ``GET /api/assignments/``: assignments in cursor pages, filtered by role, user, source, problem, due date;
- ``POST /api/assignments/``: assign problems (listed, or every one matching a filter) to one user or evenly
  across several (or everyone holding the role), with an optional due date; replaces the current assignee;
- ``GET`` / ``DELETE /api/assignments/<id>/``: one assignment; remove it;
- ``GET`` / ``PATCH /api/sources/<id>/assignment/``: a source's strict flag.

Thin: serializers read the body, ``services`` write (and refuse with the page's own messages), ``selectors``
read."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import ApiCursorPagination, choice_string, cursor_page, errors, role_permission
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from ..models import Assignment, ParentProblem, Source
from .permissions import can_manage_assignments
from .selectors import ROLES, AssignmentFilters, assignable_users, assignment_rows, matching_problem_ids
from .services import (
    MAX_PROBLEMS,
    AssignOutcome,
    assignment_assign,
    assignment_delete,
    source_assignment_strict_set,
)

CanManageAssignments = role_permission(can_manage_assignments, name="CanManageAssignments")
ROLE_HELP = "annotator or source_reviewer"


@extend_schema_field(
    {"type": "string", "enum": list(ROLES), "description": "An assignment role: " + ROLE_HELP}
)
class RoleField(serializers.ChoiceField):
    """An assignment role, documented inline (``role`` names other choice sets elsewhere in the schema)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=ROLES, **kwargs)


@extend_schema_field(
    {"type": "string", "pattern": f"^({'|'.join(ROLES)})?$", "description": '"" or ' + ROLE_HELP}
)
class OptionalRoleField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=ROLES, allow_blank=True, **kwargs)


@extend_schema_serializer(component_name="Assignment")
class AssignmentOutput(serializers.Serializer):
    id = serializers.IntegerField()
    problem_id = serializers.CharField(source="parent.problem_id")
    source_name = serializers.CharField(source="parent.source.name")
    role = choice_string(Assignment.Role.choices)
    user = serializers.CharField(source="user.username", help_text="The assignee's username.")
    due_date = serializers.DateField(allow_null=True)
    assigned_by = serializers.CharField(source="assigned_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="AssignmentShare")
class ShareOutput(serializers.Serializer):
    user = serializers.CharField()
    problems = serializers.IntegerField(help_text="How many of the request's problems this user now holds.")


@extend_schema_serializer(component_name="AssignmentOutcome")
class OutcomeOutput(serializers.Serializer):
    role = choice_string(Assignment.Role.choices)
    created = serializers.IntegerField(help_text="Problems that had nobody in this role.")
    replaced = serializers.IntegerField(help_text="Problems whose assignee or due date changed.")
    unchanged = serializers.IntegerField(help_text="Problems already assigned so (no event recorded).")
    shares = ShareOutput(many=True, help_text="Per user, in the order the problems were dealt (by username).")


@extend_schema_serializer(component_name="AssignmentFilterInput")
class FilterInput(serializers.Serializer):
    search = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Problem id contains."
    )
    source = serializers.IntegerField(  # type: ignore[assignment]  # a declared field, not Field.source
        required=False, allow_null=True, default=None, min_value=1, help_text="A source's id."
    )
    status = serializers.ChoiceField(choices=ParentProblem.Status.choices, required=False, allow_blank=True)
    domain = serializers.CharField(required=False, allow_blank=True, default="")
    language = serializers.ChoiceField(
        choices=ParentProblem.Language.choices, required=False, allow_blank=True
    )
    unassigned = OptionalRoleField(required=False, help_text="Only problems with nobody in this role.")


def _users_named(names: list[str]) -> list[Any]:
    found = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
    unknown = [name for name in names if name not in found]
    if unknown:
        raise ApplicationError(
            f"No such user: {', '.join(unknown)}.", code="assignee_unknown", extra={"users": unknown}
        )
    return sorted(found.values(), key=lambda u: u.username)


def _problem_pks(problem_ids: list[str]) -> list[int]:
    found = dict(ParentProblem.objects.filter(problem_id__in=problem_ids).values_list("problem_id", "pk"))
    unknown = [pid for pid in problem_ids if pid not in found]
    if unknown:
        raise ApplicationError(
            f"No such problem: {', '.join(unknown[:20])}{' …' if len(unknown) > 20 else ''}.",
            code="problem_unknown",
            extra={"problem_ids": unknown[:100]},
        )
    return list(found.values())


def _outcome(outcome: AssignOutcome) -> dict[str, Any]:
    return {
        "role": outcome.role,
        "created": outcome.created,
        "replaced": outcome.replaced,
        "unchanged": outcome.unchanged,
        "shares": [{"user": name, "problems": count} for name, count in outcome.per_user.items()],
    }


class AssignmentListApi(APIView):
    """Assignments (admins): list them, or assign problems in bulk."""

    permission_classes = [CanManageAssignments]
    pagination_class = ApiCursorPagination
    ordering = "pk"

    @extend_schema_serializer(component_name="AssignmentCreateInput")
    class InputSerializer(serializers.Serializer):
        role = RoleField(help_text=ROLE_HELP)
        problem_ids = serializers.ListField(
            child=serializers.CharField(max_length=180),
            required=False,
            max_length=MAX_PROBLEMS,
            help_text="The problems to assign; or give `filter` instead.",
        )
        filter = FilterInput(required=False, help_text="Every problem matching it; or give `problem_ids`.")
        users = serializers.ListField(
            child=serializers.CharField(max_length=150),
            required=False,
            max_length=500,
            help_text="Usernames: one takes every problem; several share them evenly, round robin in problem-id "
            "order (users by username). Or set `everyone`.",
        )
        everyone = serializers.BooleanField(
            required=False, default=False, help_text="Spread across every active user holding the role."
        )
        due_date = serializers.DateField(required=False, allow_null=True, default=None)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("problem_ids" in attrs) == ("filter" in attrs):
                raise serializers.ValidationError("Give exactly one of problem_ids and filter.")
            if bool(attrs.get("users")) == bool(attrs.get("everyone")):
                raise serializers.ValidationError(
                    "Give users (one or more usernames) or everyone: true, not both."
                )
            return attrs

    @extend_schema(
        operation_id="assignments_list",
        parameters=[
            OpenApiParameter("role", OpenApiTypes.STR, enum=list(ROLES)),
            OpenApiParameter("user", OpenApiTypes.STR, description="An assignee's username."),
            OpenApiParameter("source", OpenApiTypes.INT, description="A source's id."),
            OpenApiParameter("problem_id", OpenApiTypes.STR),
            OpenApiParameter("due_before", OpenApiTypes.DATE, description="Due before this day (excluded)."),
        ],
        responses={200: AssignmentOutput(many=True), **errors(400, 401, 403, 404)},
        description="Cursor pages by id (`?cursor=`, `?page_size=` up to 500). 400: a bad filter value; "
        "404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        query = request.query_params
        role = query.get("role", "")
        if role and role not in ROLES:
            raise ApplicationError(f"role must be one of {', '.join(ROLES)}.", code="invalid_parameter")
        user_id = None
        if query.get("user"):
            user_id = (
                get_user_model().objects.filter(username=query["user"]).values_list("pk", flat=True).first()
            )
            if user_id is None:
                return cursor_page(self, request, Assignment.objects.none(), lambda page: [])
        due_before = (
            serializers.DateField().run_validation(query["due_before"]) if query.get("due_before") else None
        )
        rows = assignment_rows(
            role=role,
            user_id=user_id,
            source_id=int_param(query.get("source"), name="source"),
            problem_id=query.get("problem_id", ""),
            due_before=due_before,
        )
        return cursor_page(self, request, rows, lambda page: AssignmentOutput(page, many=True).data)

    @extend_schema(
        operation_id="assignments_create",
        request=InputSerializer,
        responses={200: OutcomeOutput, **errors(400, 401, 403)},
        description="Assign (or re-assign) problems in one role. Refused as a whole (400) when a user lacks the "
        "role, a problem's annotator would be its source reviewer, a name is unknown, or nothing matches. "
        "Every change is in the audit log.",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        body = data.validated_data
        role = body["role"]
        if "problem_ids" in body:
            parent_ids = _problem_pks(body["problem_ids"])
        else:
            given = body["filter"]
            parent_ids = matching_problem_ids(
                AssignmentFilters(
                    search=given.get("search", ""),
                    source_id=given.get("source"),
                    status=given.get("status", ""),
                    domain=given.get("domain", ""),
                    language=given.get("language", ""),
                    unassigned=given.get("unassigned", ""),
                )
            )
        users = list(assignable_users(role)) if body["everyone"] else _users_named(body["users"])
        outcome = assignment_assign(
            parent_ids=parent_ids, role=role, users=users, actor=request.user, due_date=body["due_date"]
        )
        return Response(OutcomeOutput(_outcome(outcome)).data)


def _assignment_or_404(assignment_id: int) -> Assignment:
    row = assignment_rows().filter(pk=assignment_id).first()
    if row is None:
        raise Http404("No such assignment.")
    return row


class AssignmentDetailApi(APIView):
    permission_classes = [CanManageAssignments]

    @extend_schema(
        operation_id="assignments_retrieve", responses={200: AssignmentOutput, **errors(401, 403, 404)}
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        return Response(AssignmentOutput(_assignment_or_404(assignment_id)).data)

    @extend_schema(
        operation_id="assignments_destroy",
        responses={204: None, **errors(401, 403, 404)},
        description="Unassign: the problem has nobody in that role afterwards (audited).",
    )
    def delete(self, request: Request, assignment_id: int) -> Response:
        assignment_delete(assignment=_assignment_or_404(assignment_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_serializer(component_name="SourceAssignment")
class SourceAssignmentOutput(serializers.Serializer):
    source_id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    assignment_strict = serializers.BooleanField(
        help_text="true: only a problem's assigned annotator (and admins) may edit its passes, and unassigned "
        "problems only admins; false: assignment orders work, it locks nothing."
    )


class SourceAssignmentApi(APIView):
    """A source's assignment mode (admins)."""

    permission_classes = [CanManageAssignments]

    @extend_schema_serializer(component_name="SourceAssignmentInput")
    class InputSerializer(serializers.Serializer):
        assignment_strict = serializers.BooleanField()

    @extend_schema(
        operation_id="sources_assignment_retrieve",
        responses={200: SourceAssignmentOutput, **errors(401, 403, 404)},
    )
    def get(self, request: Request, source_id: int) -> Response:
        return Response(SourceAssignmentOutput(self._source(source_id)).data)

    @extend_schema(
        operation_id="sources_assignment_update",
        request=InputSerializer,
        responses={200: SourceAssignmentOutput, **errors(400, 401, 403, 404)},
        description="Make the source's assignment strict or open (audited).",
    )
    def patch(self, request: Request, source_id: int) -> Response:
        source = self._source(source_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        source = source_assignment_strict_set(
            source=source, strict=data.validated_data["assignment_strict"], actor=request.user
        )
        return Response(SourceAssignmentOutput(source).data)

    @staticmethod
    def _source(source_id: int) -> Source:
        source = Source.objects.filter(pk=source_id).first()
        if source is None:
            raise Http404("No such source.")
        return source
