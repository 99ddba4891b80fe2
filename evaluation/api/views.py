"""REST API for model configurations: list/create (admins create), detail/update (admins)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import ModelConfig
from ..permissions import can_list_models, can_manage_models
from ..services import EDITABLE_FIELDS, model_config_create, model_config_update


class ModelConfigOutput(serializers.ModelSerializer):
    class Meta:
        model = ModelConfig
        fields = ("id", "name", *EDITABLE_FIELDS, "created_at", "updated_at")


class ModelConfigInput(serializers.ModelSerializer):
    class Meta:
        model = ModelConfig
        fields = ("name", *EDITABLE_FIELDS)
        extra_kwargs = {"name": {"validators": []}}


class ModelConfigListView(APIView):
    @extend_schema(responses=ModelConfigOutput(many=True))
    def get(self, request: Request) -> Response:
        if not can_list_models(request.user):
            raise PermissionDenied()
        configs = ModelConfig.objects.all()
        if request.query_params.get("active") == "1":
            configs = configs.filter(is_active=True)
        return Response(ModelConfigOutput(configs, many=True).data)

    @extend_schema(request=ModelConfigInput, responses={201: ModelConfigOutput})
    def post(self, request: Request) -> Response:
        if not can_manage_models(request.user):
            raise PermissionDenied()
        data = ModelConfigInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields: dict[str, Any] = dict(data.validated_data)
        config = model_config_create(name=fields.pop("name"), actor=request.user, **fields)
        return Response(ModelConfigOutput(config).data, status=status.HTTP_201_CREATED)


class ModelConfigDetailView(APIView):
    @extend_schema(responses=ModelConfigOutput)
    def get(self, request: Request, name: str) -> Response:
        if not can_list_models(request.user):
            raise PermissionDenied()
        return Response(ModelConfigOutput(get_object_or_404(ModelConfig, name=name)).data)

    @extend_schema(request=ModelConfigInput, responses=ModelConfigOutput)
    def patch(self, request: Request, name: str) -> Response:
        if not can_manage_models(request.user):
            raise PermissionDenied()
        config = get_object_or_404(ModelConfig, name=name)
        data = ModelConfigInput(config, data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = {k: v for k, v in data.validated_data.items() if k != "name"}
        config = model_config_update(config=config, actor=request.user, **fields)
        return Response(ModelConfigOutput(config).data)
