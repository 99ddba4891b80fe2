"""REST API for model configurations: list (keyset pages by name) and create, detail and update.

Annotators read (they pick a model for drafting) and never see ``extra``; admins create and change. As
``annotation/api/views.py``: roles through ``models_registry.permissions``, a nested ``InputSerializer``,
reads through ``models_registry.selectors``, writes through ``models_registry.services``; a configuration is
rendered by ``ModelConfigOutput`` (admins) or ``ModelConfigPublicOutput`` (everyone else) wherever an
operation answers one. Refusals are ``ApplicationError``s (``ApiErrorOutput``).
"""

from __future__ import annotations

from typing import Any

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

from physalign_site.api import ApiCursorPagination, ApiErrorOutput, cursor_page, json_value, role_permission

from ..models import ModelConfig
from ..permissions import can_list_models, can_manage_models
from ..selectors import model_config_get, model_config_list
from ..services import EDITABLE_FIELDS, NUMBER_BOUNDS, model_config_create, model_config_update
from .schemas import EXTRA_SCHEMA, REASONING_KEYS, REASONING_SCHEMA

# Annotators read (they pick a model for drafting); admins create and change.
CanUseModels = role_permission(can_list_models, unsafe=can_manage_models, name="CanUseModels")

ERROR = ApiErrorOutput


@extend_schema_serializer(component_name="ModelConfig")
class ModelConfigOutput(serializers.ModelSerializer):
    """A configuration as admins see it (every setting)."""

    reasoning = json_value(REASONING_SCHEMA)
    extra = json_value(EXTRA_SCHEMA, help_text="Admins only: may hold provider scripts or fault settings")

    class Meta:
        model = ModelConfig
        fields: tuple[str, ...] = ("id", "name", *EDITABLE_FIELDS, "created_at", "updated_at")
        read_only_fields = fields


@extend_schema_serializer(component_name="ModelConfigPublic")
class ModelConfigPublicOutput(serializers.ModelSerializer):
    """What annotators see: no ``extra``, which may hold provider scripts (the scripted demo solvers' outputs
    are written from the answer key) or fault settings."""

    reasoning = json_value(REASONING_SCHEMA)

    class Meta:
        model = ModelConfig
        fields = tuple(f for f in ModelConfigOutput.Meta.fields if f != "extra")
        read_only_fields = fields


def _output_for(user: Any) -> type[serializers.ModelSerializer]:
    return ModelConfigOutput if can_manage_models(user) else ModelConfigPublicOutput


def _config_or_404(name: str) -> ModelConfig:
    config = model_config_get(name=name)
    if config is None:
        raise Http404("No such model.")
    return config


def _object_field(field: str, schema: dict[str, Any]) -> serializers.DictField:
    message = f"{field} must be a JSON object (an empty object for none)."

    @extend_schema_field(schema)
    class ObjectField(serializers.DictField):
        pass

    return ObjectField(required=False, error_messages={"null": message, "not_a_dict": message})


PUBLIC_NOTE = "`extra` is present for admins only; for annotators the key is absent."


class ModelConfigListApi(APIView):
    """Every configuration by name (`?active=1`: the active ones); creating one checks every rule first."""

    permission_classes = [CanUseModels]
    pagination_class = ApiCursorPagination
    ordering = "name"

    @extend_schema_serializer(component_name="ModelConfigInput")
    class InputSerializer(serializers.ModelSerializer):
        """``reasoning`` and ``extra`` must be JSON objects: null or a list is a 400, never stored as {}.
        Numbers are bounded as the service bounds them (``NUMBER_BOUNDS``); the service then applies every
        rule again, the key-variable and base-URL policy and the model family's reasoning keys included."""

        reasoning = _object_field("reasoning", REASONING_SCHEMA)
        extra = _object_field("extra", EXTRA_SCHEMA)

        class Meta:
            model = ModelConfig
            fields: tuple[str, ...] = ("name", *EDITABLE_FIELDS)
            extra_kwargs = {
                "name": {"validators": []},
                **{
                    field: {k: v for k, v in (("min_value", low), ("max_value", high)) if v is not None}
                    for field, (low, high) in NUMBER_BOUNDS.items()
                },
            }

        def validate_reasoning(self, value: dict[str, Any]) -> dict[str, Any]:
            unknown = sorted(str(key) for key in value if key not in REASONING_KEYS)
            if unknown:
                raise serializers.ValidationError(
                    f"Unknown reasoning keys {unknown}; the keys are {', '.join(REASONING_KEYS)}."
                )
            for key, item in value.items():
                kind = REASONING_KEYS[key][0]
                wrong_type = not isinstance(item, kind) or (kind is int and isinstance(item, bool))
                if item is not None and wrong_type:
                    raise serializers.ValidationError(f"reasoning.{key} must be a {kind.__name__} or null.")
            return value

    @extend_schema(
        operation_id="models_list",
        parameters=[
            OpenApiParameter(
                "active", OpenApiTypes.STR, enum=["1"], required=False, description="1: active models only"
            )
        ],
        responses={200: ModelConfigOutput(many=True), 403: ERROR, 404: ERROR},
        description="Keyset pages by name (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor. "
        + PUBLIC_NOTE,
    )
    def get(self, request: Request) -> Response:
        configs = model_config_list(active_only=request.query_params.get("active") == "1")
        output = _output_for(request.user)
        return cursor_page(self, request, configs, lambda page: output(page, many=True).data)

    @extend_schema(
        operation_id="models_create",
        request=InputSerializer,
        responses={201: ModelConfigOutput, 400: ERROR, 403: ERROR},
        description="400: an invalid body, a name taken, or a setting the rules refuse (endpoint policy, "
        "reasoning keys of the model family, bounds).",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields: dict[str, Any] = dict(data.validated_data)
        config = model_config_create(name=fields.pop("name"), actor=request.user, **fields)
        return Response(ModelConfigOutput(config).data, status=status.HTTP_201_CREATED)


class ModelConfigDetailApi(APIView):
    permission_classes = [CanUseModels]

    @extend_schema_serializer(component_name="ModelConfigUpdateInput")
    class InputSerializer(ModelConfigListApi.InputSerializer):
        """Any of the settings (the name stays)."""

        class Meta(ModelConfigListApi.InputSerializer.Meta):
            fields = EDITABLE_FIELDS

    @extend_schema(
        operation_id="models_retrieve",
        responses={200: ModelConfigOutput, 403: ERROR, 404: ERROR},
        description=PUBLIC_NOTE,
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(_output_for(request.user)(_config_or_404(name)).data)

    @extend_schema(
        operation_id="models_partial_update",
        request=InputSerializer,
        responses={200: ModelConfigOutput, 400: ERROR, 403: ERROR, 404: ERROR},
        description="400: an invalid body, or a configuration the rules refuse as a whole (nothing is saved).",
    )
    def patch(self, request: Request, name: str) -> Response:
        config = _config_or_404(name)
        data = self.InputSerializer(config, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        config = model_config_update(config=config, actor=request.user, **data.validated_data)
        return Response(ModelConfigOutput(config).data)
