"""Solving runs (a model answers the original problems), their responses with expert grading components, and
the multi-agent debate settings and turns (SeePhys Pro)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from llm.types import ROW_TERMINAL, OutputStatus
from models_registry.models import ModelConfig, OutputStatusChoices, ProviderCallRecord
from run_engine.rows import claims_bounded


class SolveRun(models.Model):
    """Original-problem solving over a fixed set of parents (App. B.4): each parent is answered in a fresh
    context from the original problem only (statement, question, options, images; no probe metadata).
    ``kind=single`` is one model; ``kind=debate`` is the debate solver, whose settings live in ``DebateRun``."""

    class Kind(models.TextChoices):
        SINGLE = "single", "Single solver"
        DEBATE = "debate", "Debate solver"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        GRADING = "grading", "Awaiting expert grading"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SINGLE)
    model = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="solve_runs"
    )
    release = models.ForeignKey(
        "probes.Release", null=True, blank=True, on_delete=models.PROTECT, related_name="solve_runs"
    )
    parent_ids = models.JSONField(default=list)  # the fixed, planned set of ParentProblem.problem_id
    seed = models.IntegerField(default=2027)
    options = models.JSONField(default=dict, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["single", "debate"]), name="solve_run_kind_valid"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "cancelled", "grading", "completed", "failed"]),
                name="solve_run_status_valid",
            ),
            models.CheckConstraint(
                condition=~Q(kind="single") | Q(model__isnull=False), name="solve_run_single_has_model"
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"solve run {self.pk}"


class SolveResponse(ProviderCallRecord):
    """One parent's answer in a solve run, its script match or expert credit s_i, and binary correctness."""

    Status = OutputStatusChoices

    class Grading(models.TextChoices):
        SCRIPT = "script", "Scored by script"
        PENDING = OutputStatus.PENDING, "Awaiting expert grading"
        GRADED = "graded", "Graded by an expert"
        NONE = "none", "Not gradable (no response)"

    TERMINAL = tuple(s for s in ROW_TERMINAL if s != OutputStatus.UNPARSEABLE)  # never unparseable

    run = models.ForeignKey(SolveRun, on_delete=models.CASCADE, related_name="responses")
    parent = models.ForeignKey("annotation.ParentProblem", on_delete=models.PROTECT, related_name="+")
    answer_type = models.CharField(max_length=10)
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.PENDING)
    final_answer = models.TextField(blank=True)  # the extracted boxed answer (or the debate's final answer)
    calls = models.PositiveIntegerField(default=0)
    grading = models.CharField(max_length=10, choices=Grading.choices, default=Grading.SCRIPT)
    match = models.BooleanField(null=True)  # script result for choice / fill-in
    credit = models.FloatField(null=True)  # s_i in [0, 1]
    correct = models.BooleanField(null=True)  # binary final-answer correctness (solve link, Table 17)
    graded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    graded_at = models.DateTimeField(null=True, blank=True)
    grade_note = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["run", "parent"], name="solve_response_unique"),
            models.CheckConstraint(
                condition=Q(credit__isnull=True) | (Q(credit__gte=0) & Q(credit__lte=1)),
                name="solve_response_credit_unit",
            ),
            claims_bounded("solve_response_claims_bounded"),
            models.CheckConstraint(
                condition=Q(grading__in=["script", "pending", "graded", "none"]),
                name="solve_response_grading_valid",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="solve_response_run_status")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.parent_id}"


class GradeComponent(models.Model):
    """One rubric component of an expert grade: p_ik awarded of w_ik maximum (0 ≤ p ≤ w, w > 0)."""

    response = models.ForeignKey(SolveResponse, on_delete=models.CASCADE, related_name="components")
    order = models.PositiveSmallIntegerField()
    description = models.CharField(max_length=500)
    awarded = models.DecimalField(max_digits=7, decimal_places=2)
    maximum = models.DecimalField(max_digits=7, decimal_places=2)

    class Meta:
        ordering = ["response", "order"]
        constraints = [
            models.UniqueConstraint(fields=["response", "order"], name="grade_component_unique"),
            models.CheckConstraint(condition=Q(maximum__gt=0), name="grade_component_maximum_positive"),
            models.CheckConstraint(
                condition=Q(awarded__gte=0) & Q(awarded__lte=models.F("maximum")),
                name="grade_component_awarded_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.response_id}#{self.order}"


# ------------------------------------------------------------------------------------------------ debate (Debate §3)


class DebateRun(models.Model):
    """The debate configuration of a ``SolveRun`` of kind ``debate``: ordered solvers, helper models, level,
    front-end and ablation switches. Its per-parent answers are the run's ``SolveResponse`` rows."""

    solve_run = models.OneToOneField(SolveRun, on_delete=models.CASCADE, related_name="debate")
    solver_names = models.JSONField(
        default=list
    )  # ordered ModelConfig names; the first is the default solver
    pruner = models.ForeignKey(ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    selector = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    extractor = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    frontend = models.ForeignKey(
        ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    level = models.PositiveSmallIntegerField(default=1)  # Debate Table 1: 1–4 debate (+ front-end), 5 single
    settings = models.JSONField(default=dict, blank=True)  # DebateConfig fields and front-end switches

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(level__gte=1) & Q(level__lte=5), name="debate_run_level_valid")
        ]

    def __str__(self) -> str:
        return f"debate of {self.solve_run_id}"


class DebateTurn(models.Model):
    """One step of a parent's debate transcript: a model call (front-end, solve, extract, prune, select) or a
    recorded vote, with its tokens and cost."""

    response = models.ForeignKey(SolveResponse, on_delete=models.CASCADE, related_name="turns")
    seq = models.PositiveIntegerField()
    round = models.PositiveSmallIntegerField(default=0)  # 0 = front-end
    stage = models.CharField(max_length=20)
    agent = models.CharField(max_length=100, blank=True)
    model = models.ForeignKey(ModelConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    request = models.JSONField(default=dict, blank=True)  # what the model saw (texts, image digests)
    raw_output = models.TextField(blank=True)
    parsed = models.JSONField(default=dict, blank=True)  # answer, label/kept, vote, selection …
    status = models.CharField(max_length=20, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["response", "seq"]
        constraints = [models.UniqueConstraint(fields=["response", "seq"], name="debate_turn_unique")]

    def __str__(self) -> str:
        return f"{self.response_id}#{self.seq} {self.stage}"
