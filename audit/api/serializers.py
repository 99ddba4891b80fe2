from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from physalign_site.api import JSON_VALUE_REF, json_value

from ..models import Event

# what ``event_record`` stores: the fields of the object that changed, each a JSON value
FIELDS = {"type": "object", "additionalProperties": JSON_VALUE_REF}


class EventOutput(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()
    before = json_value(
        {**FIELDS, "description": "The object's fields before (null when it was created)."},
        allow_null=True,
        read_only=True,
    )
    after = json_value(
        {**FIELDS, "description": "The object's fields after (null when it was deleted)."},
        allow_null=True,
        read_only=True,
    )

    class Meta:
        model = Event
        fields = ["id", "at", "actor", "verb", "object_type", "object_id", "before", "after"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_actor(self, event: Event) -> str | None:
        return event.actor.get_username() if event.actor is not None else None
