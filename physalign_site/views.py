from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .api import errors
from .roles import user_roles


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness + database reachability, for container healthchecks. Public, reveals nothing."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class MeView(APIView):
    """Who is calling: any signed-in user (one without a role gets ``roles: []``)."""

    @extend_schema(
        responses={
            200: inline_serializer(
                "Me",
                {
                    "username": serializers.CharField(),
                    "roles": serializers.ListField(child=serializers.CharField()),
                },
            ),
            **errors(401),
        }
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username(), "roles": sorted(user_roles(request.user))})
