from __future__ import annotations

from django.db.models import QuerySet

from .models import Event


def event_list() -> QuerySet[Event]:
    return Event.objects.select_related("actor").order_by("-at", "-id")
