from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .roles import user_roles


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness + database reachability, for container healthchecks. Public, reveals nothing."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class MeView(APIView):
    @extend_schema(
        responses=inline_serializer(
            "Me",
            {
                "username": serializers.CharField(),
                "roles": serializers.ListField(child=serializers.CharField()),
            },
        )
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username(), "roles": sorted(user_roles(request.user))})
