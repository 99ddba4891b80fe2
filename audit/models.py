"""The append-only audit trail: who did what to which object, with the before and after states."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EventQuerySet(models.QuerySet):
    def update(self, **kwargs):  # type: ignore[override]
        raise TypeError("Events are append-only.")

    def delete(self):  # type: ignore[override]
        raise TypeError("Events are append-only.")


class Event(models.Model):
    """Append-only audit trail written by services: who did what to which object, before/after."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verb = models.CharField(max_length=100)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=200)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_event_object_idx")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.verb} {self.object_type}:{self.object_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise TypeError("Events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Events are append-only.")


class Disclosure(models.Model):
    """Who has been shown what is private of a parent problem: a probe's target (gold alias, expected reading,
    entity ids behind aliases; ``logical_probe_id`` set) or the parent's answer and solution (``logical_probe_id``
    blank). Written by :func:`audit.disclosure.disclose` whenever a page, API or download shows such a thing;
    read by the review queue, which never hands that user the parent to review blind (DESIGN §5 "Who may know a
    target"). One row per user, parent and probe: the first time and where it was shown."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    parent = models.ForeignKey("annotation.ParentProblem", on_delete=models.CASCADE, related_name="+")
    logical_probe_id = models.CharField(max_length=200, blank=True, default="")
    where = models.CharField(max_length=100)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "parent", "logical_probe_id"], name="audit_disclosure_once_per_user_probe"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} saw {self.logical_probe_id or 'answer'} of parent {self.parent_id} ({self.where})"
