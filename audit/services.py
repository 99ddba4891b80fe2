"""The one way to write the audit trail; every app's services call it inside their own transaction."""

from __future__ import annotations

from typing import Any

from django.db import models

from .models import Event


def event_record(
    *,
    actor: Any,
    verb: str,
    obj: models.Model | None = None,
    object_type: str = "",
    object_id: str = "",
    before: Any = None,
    after: Any = None,
) -> Event:
    """Append one audit event. Services call this inside their own transaction."""
    if obj is not None:
        object_type = object_type or obj._meta.label_lower
        object_id = object_id or str(obj.pk)
    actor_obj = actor if getattr(actor, "is_authenticated", False) else None
    return Event.objects.create(
        actor=actor_obj, verb=verb, object_type=object_type, object_id=object_id, before=before, after=after
    )
