"""The model configurations page (admins)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from .models import ModelConfig
from .permissions import can_manage_models


@login_required
@require_GET
def model_list(request: HttpRequest) -> TemplateResponse:
    if not can_manage_models(request.user):
        raise PermissionDenied
    return TemplateResponse(
        request,
        "models_registry/model_list.html",
        {"configs": ModelConfig.objects.all(), "nav_section": "models"},
    )
