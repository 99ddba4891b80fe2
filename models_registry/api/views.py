"""REST API for model configurations: list/create (admins create), detail/update (admins)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import role_permission

from ..models import ModelConfig
from ..permissions import can_list_models, can_manage_models
from ..services import EDITABLE_FIELDS, NUMBER_BOUNDS, model_config_create, model_config_update


class ModelConfigOutput(serializers.ModelSerializer):
    class Meta:
        model = ModelConfig
        fields = ("id", "name", *EDITABLE_FIELDS, "created_at", "updated_at")


class ModelConfigPublicOutput(serializers.ModelSerializer):
    """What annotators see: no ``extra``, which may hold provider scripts (the scripted demo solvers' outputs
    are written from the answer key) or fault settings."""

    class Meta:
        model = ModelConfig
        fields = ("id", "name", *(f for f in EDITABLE_FIELDS if f != "extra"), "created_at", "updated_at")


# Annotators read (they pick a model for drafting); admins create and change.
CanUseModels = role_permission(can_list_models, unsafe=can_manage_models, name="CanUseModels")


def _output_for(user: Any) -> type[serializers.ModelSerializer]:
    return ModelConfigOutput if can_manage_models(user) else ModelConfigPublicOutput


def _json_object(field: str) -> serializers.DictField:
    message = f"{field} must be a JSON object (an empty object for none)."
    return serializers.DictField(required=False, error_messages={"null": message, "not_a_dict": message})


class ModelConfigInput(serializers.ModelSerializer):
    """``reasoning`` and ``extra`` must be JSON objects: null or a list is a 400, never stored as {}.
    Numbers are bounded as the service bounds them (``NUMBER_BOUNDS``); the service then applies every
    rule again, the key-variable and base-URL policy included."""

    reasoning = _json_object("reasoning")
    extra = _json_object("extra")

    class Meta:
        model = ModelConfig
        fields = ("name", *EDITABLE_FIELDS)
        extra_kwargs = {
            "name": {"validators": []},
            **{
                field: {k: v for k, v in (("min_value", low), ("max_value", high)) if v is not None}
                for field, (low, high) in NUMBER_BOUNDS.items()
            },
        }


class ModelConfigListView(APIView):
    permission_classes = [CanUseModels]

    @extend_schema(responses=ModelConfigOutput(many=True))
    def get(self, request: Request) -> Response:
        configs = ModelConfig.objects.all()
        if request.query_params.get("active") == "1":
            configs = configs.filter(is_active=True)
        return Response(_output_for(request.user)(configs, many=True).data)

    @extend_schema(request=ModelConfigInput, responses={201: ModelConfigOutput})
    def post(self, request: Request) -> Response:
        data = ModelConfigInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields: dict[str, Any] = dict(data.validated_data)
        config = model_config_create(name=fields.pop("name"), actor=request.user, **fields)
        return Response(ModelConfigOutput(config).data, status=status.HTTP_201_CREATED)


class ModelConfigDetailView(APIView):
    permission_classes = [CanUseModels]

    @extend_schema(responses=ModelConfigOutput)
    def get(self, request: Request, name: str) -> Response:
        return Response(_output_for(request.user)(get_object_or_404(ModelConfig, name=name)).data)

    @extend_schema(request=ModelConfigInput, responses=ModelConfigOutput)
    def patch(self, request: Request, name: str) -> Response:
        config = get_object_or_404(ModelConfig, name=name)
        data = ModelConfigInput(config, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = {k: v for k, v in data.validated_data.items() if k != "name"}
        config = model_config_update(config=config, actor=request.user, **fields)
        return Response(ModelConfigOutput(config).data)
