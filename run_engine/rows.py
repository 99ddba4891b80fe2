"""The claim fields every leased row carries (evaluation requests, solving responses, drafts, compile chunks),
the one claim limit and the one retry budget."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

MAX_CLAIMS = 3  # one attempt plus at most two infrastructure retries


def claims_bounded(name: str) -> models.CheckConstraint:
    """The check constraint every leased table carries: a row is claimed at most ``MAX_CLAIMS`` times."""
    return models.CheckConstraint(condition=Q(claims__lte=MAX_CLAIMS), name=name)


def retries_left(configured: int, claims: int) -> int:
    """The provider retries a claim may still spend: the configured number, capped so that all claims of a
    row together never make more than ``MAX_CLAIMS`` calls (``claims`` counts this claim too)."""
    return max(0, min(int(configured), MAX_CLAIMS - claims))


class LeasedRow(models.Model):
    claims = models.PositiveSmallIntegerField(default=0)  # times a worker took the row (≤ MAX_CLAIMS)
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
