"""The physics rules: a page listing the rule set (and, for admins, a blocking toggle per rule) and its API.

Thin views: roles through ``annotation.physics.permissions``, reads and writes through
``annotation.physics.services``, refusals as ``ApplicationError`` (the API renders them as ``ApiError``).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.access import require
from physalign_site.api import errors, role_permission
from physalign_site.errors import ApplicationError

from .checks import load_rules
from .permissions import can_manage_physics_rules, can_view_physics_rules
from .services import SEVERITIES, RuleView, physics_rule_list, physics_rule_set_blocking

BLOCKING_CHOICES = {"1": True, "0": False}


@require_http_methods(["GET", "POST"])
@require(can_view_physics_rules)
def physics_rules(request: HttpRequest) -> HttpResponse:
    """The rule set's version and every rule: what it checks and whether it blocks submit; admins switch a rule
    between warning and blocking (POST ``code``, ``blocking`` = 1/0)."""
    if request.method == "POST":
        if not can_manage_physics_rules(request.user):
            raise PermissionDenied
        code = request.POST.get("code", "")
        try:
            blocking = BLOCKING_CHOICES.get(request.POST.get("blocking", ""))
            if blocking is None:
                raise ApplicationError(
                    "Say whether the rule blocks (blocking=1 or 0).", code="blocking_required"
                )
            view = physics_rule_set_blocking(code=code, blocking=blocking, actor=request.user)
        except ApplicationError as error:
            messages.error(request, f"{error.message} ({error.code})")
        else:
            messages.success(request, f"{view.code} is now {view.severity}.")
        return redirect("physics:rules")
    rules = load_rules()
    return TemplateResponse(
        request,
        "annotation/physics_rules.html",
        {
            "rules_version": rules.version,
            "rules": physics_rule_list(rules=rules),
            "can_manage": can_manage_physics_rules(request.user),
            "nav_section": "physics_rules",
        },
    )


# --- API ----------------------------------------------------------------------------------------------

CanReadPhysicsRules = role_permission(
    can_view_physics_rules, unsafe=can_manage_physics_rules, name="CanReadPhysicsRules"
)


@extend_schema_serializer(component_name="PhysicsRule")
class PhysicsRuleOutput(serializers.Serializer):
    code = serializers.CharField(help_text="PHYS_…: the code its findings carry")
    title = serializers.CharField(source="rule.title")
    description = serializers.CharField(source="rule.description", help_text="what the rule checks")
    blocking = serializers.BooleanField(help_text="true: a finding of this rule refuses submit")
    severity = serializers.ChoiceField(choices=SEVERITIES, help_text="the severity its findings carry")


@extend_schema_serializer(component_name="PhysicsRuleSet")
class PhysicsRuleSetOutput(serializers.Serializer):
    rules_version = serializers.CharField(
        help_text="the shipped rule set's version (recorded with every check)"
    )
    rules = PhysicsRuleOutput(many=True)


CODE_PARAM = OpenApiParameter(
    "code", OpenApiTypes.STR, OpenApiParameter.PATH, description="A rule's PHYS_… code"
)


class PhysicsRuleListApi(APIView):
    """The rule set: a fixed table shipped as data, so never paginated."""

    permission_classes = [CanReadPhysicsRules]

    @extend_schema(
        operation_id="physics_rules_list",
        responses={200: PhysicsRuleSetOutput, **errors(401, 403)},
        description="Every physics rule with what it checks and its severity here (warning unless an admin made "
        "it blocking).",
    )
    def get(self, request: Request) -> Response:
        rules = load_rules()
        return Response(
            PhysicsRuleSetOutput(
                {"rules_version": rules.version, "rules": physics_rule_list(rules=rules)}
            ).data
        )


class PhysicsRuleDetailApi(APIView):
    permission_classes = [CanReadPhysicsRules]

    @extend_schema_serializer(component_name="PhysicsRuleUpdateInput")
    class InputSerializer(serializers.Serializer):
        blocking = serializers.BooleanField(help_text="true: its findings refuse submit; false: a warning")

    @extend_schema(
        operation_id="physics_rules_retrieve",
        parameters=[CODE_PARAM],
        responses={200: PhysicsRuleOutput, **errors(401, 403, 404)},
    )
    def get(self, request: Request, code: str) -> Response:
        return Response(PhysicsRuleOutput(_rule_view(code)).data)

    @extend_schema(
        operation_id="physics_rules_partial_update",
        parameters=[CODE_PARAM],
        request=InputSerializer,
        responses={200: PhysicsRuleOutput, **errors(400, 401, 403, 404)},
        description="Admins only: make the rule blocking (its findings refuse submit) or a warning again. Audited.",
    )
    def patch(self, request: Request, code: str) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        view = physics_rule_set_blocking(
            code=code, blocking=data.validated_data["blocking"], actor=request.user
        )
        return Response(PhysicsRuleOutput(view).data)


def _rule_view(code: str) -> RuleView:
    for view in physics_rule_list():
        if view.code == code:
            return view
    raise ApplicationError(f"No physics rule {code!r}.", code="physics_rule_not_found", status=404)
