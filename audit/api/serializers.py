from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ..models import Event


class EventOutput(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()

    class Meta:
        model = Event
        fields = ["id", "at", "actor", "verb", "object_type", "object_id", "before", "after"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_actor(self, event: Event) -> str | None:
        return event.actor.get_username() if event.actor is not None else None
