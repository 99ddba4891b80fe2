"""The audit trail over REST (admins only)."""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics

from physalign_site.api import ApiCursorPagination, errors, role_permission

from .. import permissions as perms
from ..selectors import event_list
from .filters import EventFilter
from .serializers import EventOutput

CanViewEvents = role_permission(perms.can_view_events, name="CanViewEvents")


@extend_schema_view(
    get=extend_schema(
        operation_id="events_list",
        responses={200: EventOutput(many=True), **errors(401, 403, 404)},
        description="Cursor pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
)
class EventListApi(generics.ListAPIView):
    """The append-only audit trail (admins only), newest first, in cursor pages."""

    permission_classes = [CanViewEvents]
    serializer_class = EventOutput
    pagination_class = ApiCursorPagination
    filterset_class = EventFilter
    filter_backends = [DjangoFilterBackend]
    ordering = "-id"  # unique; the order the events were written in

    def get_queryset(self):
        return event_list()
