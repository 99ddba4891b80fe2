"""The audit trail over REST (admins only)."""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import filters, generics

from physalign_site.api import ApiPagination, role_permission

from .. import permissions as perms
from ..selectors import event_list
from .filters import EventFilter
from .serializers import EventOutput

CanViewEvents = role_permission(perms.can_view_events, name="CanViewEvents")


@extend_schema_view(get=extend_schema(operation_id="events_list"))
class EventListApi(generics.ListAPIView):
    """The append-only audit trail (admins only)."""

    permission_classes = [CanViewEvents]
    serializer_class = EventOutput
    pagination_class = ApiPagination
    filterset_class = EventFilter
    filter_backends = [DjangoFilterBackend, filters.OrderingFilter]
    ordering_fields = ["at", "id"]

    def get_queryset(self):
        return event_list()
