"""What every app's REST API shares: the role permission factory and the page size rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def role_permission(check: Callable[[Any], bool], *, unsafe: Callable[[Any], bool] | None = None,
                    name: str = "RolePermission") -> type[BasePermission]:
    """A DRF permission wrapping a role check of an app's ``permissions`` module (``unsafe`` for writes)."""

    def has_permission(self: BasePermission, request: Request, view: APIView) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if unsafe is not None and request.method not in SAFE_METHODS:
            return unsafe(user)
        return check(user)

    return type(name, (BasePermission,), {"has_permission": has_permission})


class ApiPagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200
