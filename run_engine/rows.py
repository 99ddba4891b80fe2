"""The claim fields every leased row carries (evaluation requests, solving responses, drafts)."""

from __future__ import annotations

from django.db import models


class LeasedRow(models.Model):
    claims = models.PositiveSmallIntegerField(default=0)  # times a worker took the row (≤ MAX_CLAIMS)
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
