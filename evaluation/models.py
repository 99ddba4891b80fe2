"""Evaluation runs, their requests, item scores and metric snapshots."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from llm.types import ROW_TERMINAL
from models_registry.models import ModelConfig, OutputStatusChoices, ProviderCallRecord
from run_engine.rows import claims_bounded


class EvalRun(models.Model):
    """One evaluation: models × probes × conditions, all request rows planned up front (fixed denominator)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        PAUSED = "paused", "Paused"  # stopped by its budget, resumable (``error`` says why)
        SCORING = "scoring", "Scoring"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=200, blank=True)
    release = models.ForeignKey(
        "probes.Release", null=True, blank=True, on_delete=models.PROTECT, related_name="eval_runs"
    )
    model_configs = models.ManyToManyField(ModelConfig, related_name="eval_runs")
    conditions = models.JSONField(default=list)
    probe_filter = models.JSONField(default=dict, blank=True)
    seed = models.IntegerField(default=2027)
    options = models.JSONField(default=dict, blank=True)  # chunk size, claim lease, resamples
    manifest = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Progress counters: the rows that ended, per final status, and their tokens and dollars, added in the
    # transaction that ends them and recounted when a rescore changes statuses (``evaluation.runs.progress``),
    # so a progress poll reads the run row instead of counting its requests.
    done_completed = models.PositiveIntegerField(default=0)
    done_unparseable = models.PositiveIntegerField(default=0)
    done_refusal = models.PositiveIntegerField(default=0)
    done_truncated = models.PositiveIntegerField(default=0)
    done_infra_missing = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=20, decimal_places=8, default=0)
    # the item file (JSONL, the contract of ``manage.py metrics``), written once when the run is scored and
    # rebuilt by a rescore (``evaluation.runs.item_file``); empty until then
    items_file = models.FileField(upload_to="eval_runs/", max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=["queued", "running", "cancelled", "paused", "scoring", "completed", "failed"]
                ),
                name="eval_run_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"run {self.pk}"


class EvalRequest(ProviderCallRecord):
    """One (run, model, probe, condition) request. The raw output string is kept as returned."""

    Status = OutputStatusChoices

    TERMINAL = ROW_TERMINAL

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="requests")
    model = models.ForeignKey(ModelConfig, on_delete=models.PROTECT, related_name="+")
    probe = models.ForeignKey("probes.Probe", on_delete=models.PROTECT, related_name="+")
    condition = models.CharField(max_length=10)
    pools = models.JSONField(default=list)
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.PENDING)
    # digest of the model settings as sent (``evaluation.runs.cache``): with ``request_hash`` the response key
    settings_hash = models.CharField(max_length=64, blank=True)
    # the earlier row whose completed response this row reused instead of calling the model (opt-in per run)
    cached_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reused_by"
    )
    # the estimated cost of the row's call while it is in flight in a run with a budget (``llm.estimate``)
    estimate_usd = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)

    class Meta:
        ordering = ["run", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "model", "probe", "condition"], name="eval_request_unique"
            ),
            models.CheckConstraint(
                condition=Q(condition__in=["raw", "gold", "no_image", "reordered"]),
                name="eval_request_condition_valid",
            ),
            claims_bounded("eval_request_claims_bounded"),
        ]
        indexes = [
            models.Index(fields=["run", "status"], name="eval_request_run_status"),
            models.Index(
                fields=["request_hash", "settings_hash"],
                name="eval_request_response_key",
                condition=Q(provider_status="completed"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.model_id}/{self.probe_id}/{self.condition}"


class ItemScore(models.Model):
    request = models.OneToOneField(EvalRequest, on_delete=models.CASCADE, related_name="score")
    status = models.CharField(max_length=14)
    C = models.SmallIntegerField(null=True)
    G = models.SmallIntegerField(null=True)
    J = models.SmallIntegerField(null=True)
    object_valid = models.BooleanField(default=False)
    field_valid = models.JSONField(default=dict)
    canonical = models.JSONField(null=True)
    scored_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(J__isnull=True) | (Q(C__isnull=False) & Q(G__isnull=False)),
                name="item_score_j_needs_c_and_g",
            ),
        ]

    def __str__(self) -> str:
        return f"score of {self.request_id}"


class ProviderBatch(models.Model):
    """One submission of a run's rows to a provider's batch API (``evaluation.runs.batch``): the rows it holds
    (claimed under ``claim_token``), the provider's id and progress, until its results are collected."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        ENDED = "ended", "Ended"
        FAILED = "failed", "Failed"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="batches")
    model = models.ForeignKey(ModelConfig, on_delete=models.PROTECT, related_name="+")
    external_id = models.CharField(max_length=300)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    request_ids = models.JSONField(default=list)
    claim_token = models.CharField(max_length=64)
    # as the provider reports them while it runs
    total = models.PositiveIntegerField(default=0)
    succeeded = models.PositiveIntegerField(default=0)
    errored = models.PositiveIntegerField(default=0)
    polls = models.PositiveIntegerField(default=0)
    # the poll chain that may check it: a requeue (resume) starts a new chain and the old one stops
    poll_token = models.CharField(max_length=32, blank=True)
    # once collected: rows answered from the batch, and rows sent back to direct calls (errored, expired, missing)
    collected = models.BooleanField(default=False)
    answered = models.PositiveIntegerField(default=0)
    fallback = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=["running", "ended", "failed", "expired", "cancelled"]),
                name="provider_batch_state_valid",
            ),
        ]
        indexes = [models.Index(fields=["run", "collected"], name="provider_batch_open")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.external_id}"


class MetricSnapshot(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="snapshots")
    model = models.ForeignKey(ModelConfig, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    subject = models.CharField(max_length=100)  # the model's name, or "baseline"
    pool = models.CharField(max_length=20)
    metric = models.CharField(max_length=60)
    value = models.FloatField(null=True)
    ci_low = models.FloatField(null=True)
    ci_high = models.FloatField(null=True)
    lower = models.FloatField(null=True)
    upper = models.FloatField(null=True)
    support_parents = models.PositiveIntegerField(default=0)
    support_probes = models.PositiveIntegerField(default=0)
    undefined_reason = models.CharField(max_length=60, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "subject", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["run", "subject", "metric"], name="metric_snapshot_unique")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.model_id}/{self.metric}"


# ------------------------------------------------------------------------------------------------ solving (App. B.4)
