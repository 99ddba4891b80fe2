"""Blind-first probe review (Kit §6), batch audit (Kit §7 Path B) and release signoff.

Work is handed out in *slots*: one parent problem, one role, one context (``development`` or an audit plan).
Blind answers and decisions are immutable rows bound to the probe's ``review_target_root``; a recompiled
probe gets a new root, which makes every earlier row stale without deleting it. An adjudicator's decision
is the resolution (Kit §6.5) and lives in the same table under the ``adjudicator`` role.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kit import review as kit_review
from physalign_site.errors import ApplicationError

CONFIRMATIONS = (
    ("source_semantics", "Source supports the question semantics; nothing from Pass 5 or the solution."),
    ("complete_targets", "Full source checked; the target set is closed; no single choice manufactured."),
    (
        "distinct_candidates",
        "Candidates are distinguishable; identity merges correct; no leak through names.",
    ),
    (
        "rendered_locations",
        "Original and every locator view seen; R/E/H precise and not occluding key content.",
    ),
    (
        "packet_no_binding_leakage",
        "The +GT packet gives only readable diagram text (tick for an empty packet: not applicable).",
    ),
    (
        "diagram_asset_scope",
        "The read/packet region belongs to the problem diagram (text branch: not applicable).",
    ),
)
CONFIRMATION_KEYS = tuple(key for key, _ in CONFIRMATIONS)
assert CONFIRMATION_KEYS == kit_review.CONFIRMATIONS, "labels must follow the Kit's confirmations"

SIGNOFF_CONFIRMATIONS = (
    ("source_and_rules_checked", "Sources and the rule versions were checked."),
    ("known_systemic_and_unresolved_issues_zero", "No known systemic or unresolved issue remains."),
    ("near_duplicates_and_external_splits_checked", "Near duplicates and external splits were checked."),
    ("not_selected_by_model_performance", "Nothing was selected by model performance."),
    ("review_evidence_authentic", "The review evidence is authentic."),
    ("data_use_authorized", "Use of the data is authorized."),
)
SIGNOFF_KEYS = tuple(key for key, _ in SIGNOFF_CONFIRMATIONS)
assert SIGNOFF_KEYS == kit_review.SIGNOFF_CHECKS, "labels must follow the Kit's signoff checks"


class Role(models.TextChoices):
    INDIVIDUAL = "individual", "Individual"
    PRIMARY = "primary", "Primary"
    SECONDARY = "secondary", "Secondary"
    ADJUDICATOR = "adjudicator", "Adjudicator"


class Severity(models.TextChoices):
    NONE = "none", "None"
    MINOR = "minor", "Minor (typography; does not affect judgment)"
    SERIOUS = "serious", "Serious (isolated source or scope problem: exclude the parent)"
    SYSTEMIC = "systemic", "Systemic (rule error: stop that rule version)"
    INFORMATION = "information", "Information (leak of answer, version or packet: stop release)"
    UNRESOLVED = "unresolved", "Unresolved (cannot approve)"


class ReviewSlot(models.Model):
    """One parent's probes for one reviewer in one role and context, handed out by the queue."""

    parent = models.ForeignKey(
        "annotation.ParentProblem", on_delete=models.CASCADE, related_name="review_slots"
    )
    role = models.CharField(max_length=12, choices=Role.choices)
    context = models.CharField(max_length=40)  # "development" or "audit:<plan id>"
    blind_first_probe_id = models.CharField(max_length=68)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="review_slots"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["parent__problem_id", "role"]
        constraints = [
            models.UniqueConstraint(fields=["parent", "role", "context"], name="review_slot_unique"),
            # a reviewer holds at most one role on a parent in a context (primary, secondary and adjudicator
            # must be different people); the claim service also serializes one reviewer's claims
            models.UniqueConstraint(
                fields=["parent", "context", "reviewer"],
                condition=Q(reviewer__isnull=False),
                name="one_slot_per_reviewer_per_parent",
            ),
        ]
        indexes = [models.Index(fields=["context", "role", "reviewer"])]

    def __str__(self) -> str:
        return f"{self.context}/{self.role}/{self.parent_id}"


class BlindOrder(models.TextChoices):
    """When a reviewer may see a parent's private targets (per review context).

    ``strict`` (the default, stricter than the Kit): every probe of the claimed parent is answered blind
    before any target of that parent is revealed, since siblings share entities, anchors and packets.
    ``kit``: the Kit's order, only the blind-first probe before the first reveal; each other probe is still
    answered blind before its own reveal, and no response carries a private string of a probe the reviewer
    has not answered blind yet (it is withheld), though geometry shared between siblings can still hint.
    """

    STRICT = "strict", "Strict: every probe of the parent blind before any reveal"
    KIT = "kit", "Kit: the blind-first probe before the first reveal"


class ReviewContextSetting(models.Model):
    """Per-context review settings (a context without a row uses the defaults)."""

    context = models.CharField(max_length=40, unique=True)
    blind_order = models.CharField(max_length=8, choices=BlindOrder.choices, default=BlindOrder.STRICT)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(blind_order__in=["strict", "kit"]), name="review_blind_order_valid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.context}: {self.blind_order}"


class ImmutableRow(models.Model):
    """Rows that are written once: a second save or a delete through the ORM instance is refused."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.pop("_allow_update", False):
            raise ApplicationError("This record is immutable once submitted.", code="IMMUTABLE", status=409)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ApplicationError("This record is immutable once submitted.", code="IMMUTABLE", status=409)


class BlindAnswer(ImmutableRow):
    """The reviewer's own answer, given before any private field is shown (Kit §6.3)."""

    slot = models.ForeignKey(ReviewSlot, on_delete=models.PROTECT, related_name="blind_answers")
    probe = models.ForeignKey("probes.Probe", on_delete=models.CASCADE, related_name="blind_answers")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="blind_answers"
    )
    role = models.CharField(max_length=12, choices=Role.choices)
    review_target_root = models.CharField(max_length=64)
    answer = models.JSONField(null=True, blank=True)  # {"referent": [...]} / {"owner": [...], "read": {...}}
    cannot_answer = models.BooleanField(default=False)
    reason = models.TextField(blank=True)
    matches_target = models.BooleanField(null=True)  # computed at submit; shown only after reveal
    sequence = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slot", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["slot", "probe", "review_target_root"], name="blind_once_per_root"
            ),
            models.UniqueConstraint(fields=["slot", "sequence"], name="blind_sequence_unique"),
            models.CheckConstraint(
                condition=Q(cannot_answer=True, answer__isnull=True)
                | Q(cannot_answer=False, answer__isnull=False),
                name="blind_answer_or_cannot",
            ),
        ]

    def __str__(self) -> str:
        return f"blind {self.probe_id} by {self.reviewer_id}"

    @property
    def display(self) -> str:
        """The answer as a reviewer wrote it, e.g. ``owner: E2 · read R1: m`` (never a Python dict)."""
        if self.cannot_answer:
            return "cannot be answered uniquely"
        assert self.answer is not None  # blind_answer_or_cannot
        parts = []
        for key, value in sorted(self.answer.items()):
            if isinstance(value, dict):
                parts += [f"read {anchor}: {text}" for anchor, text in sorted(value.items())]
            else:
                parts.append(f"{key}: {', '.join(value)}")
        return " · ".join(parts)


class ReviewDecision(ImmutableRow):
    """Six confirmations, severity, note, probe and packet status (Kit §6.2, §6.4). Adjudicator = resolution."""

    class Status(models.TextChoices):
        APPROVED = "approved", "Approve"
        REJECTED = "rejected", "Reject"

    class Packet(models.TextChoices):
        APPROVED_NONEMPTY = "approved_nonempty", "Approved (non-empty)"
        APPROVED_EMPTY = "approved_empty", "Approved (empty)"
        REJECTED = "rejected", "Rejected"

    slot = models.ForeignKey(ReviewSlot, on_delete=models.PROTECT, related_name="decisions")
    probe = models.ForeignKey("probes.Probe", on_delete=models.CASCADE, related_name="review_decisions")
    blind = models.OneToOneField(BlindAnswer, on_delete=models.PROTECT, related_name="decision")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_decisions"
    )
    role = models.CharField(max_length=12, choices=Role.choices)
    review_target_root = models.CharField(max_length=64)
    status = models.CharField(max_length=8, choices=Status.choices)
    severity = models.CharField(max_length=12, choices=Severity.choices)
    confirmations = models.JSONField()  # {key: bool} for the six CONFIRMATION_KEYS
    packet_state = models.CharField(max_length=20, choices=Packet.choices)
    packet_empty_reason = models.CharField(max_length=60, blank=True)
    note = models.TextField(blank=True)
    sequence = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slot", "sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["slot", "probe", "review_target_root"], name="decision_once_per_root"
            ),
            models.CheckConstraint(
                condition=Q(status="rejected") | Q(severity__in=["none", "minor"]),
                name="approval_needs_none_or_minor",
            ),
            models.CheckConstraint(
                condition=Q(status="approved") | ~Q(severity__in=["none", "minor"]),
                name="rejection_needs_a_defect_severity",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.status}/{self.severity} {self.probe_id} by {self.reviewer_id}"

    @property
    def all_confirmed(self) -> bool:
        return all(self.confirmations.get(key) is True for key in CONFIRMATION_KEYS)


class AuditCampaign(models.Model):
    """One campaign per data batch, with a random nonce that fixes every round's sample (never re-rolled)."""

    campaign_id = models.CharField(max_length=70, unique=True)
    nonce = models.CharField(max_length=64, unique=True)
    policy = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.campaign_id


class AuditPlan(models.Model):
    campaign = models.ForeignKey(AuditCampaign, on_delete=models.PROTECT, related_name="plans")
    round_number = models.PositiveSmallIntegerField()
    seed = models.CharField(max_length=64)
    candidates = models.JSONField()
    sample = models.JSONField()
    secondary = models.JSONField()
    risk = models.JSONField()
    uncovered_risk_tags = models.JSONField()
    blind_first = models.JSONField()
    target_roots = models.JSONField()  # {logical_probe_id: review_target_root} of the audited parents
    catalog_root = models.CharField(max_length=64)  # digest of every candidate probe's root at plan time
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "round_number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "round_number"], name="one_plan_per_round"),
            models.CheckConstraint(condition=Q(round_number__in=[1, 2]), name="at_most_two_rounds"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id} round {self.round_number}"

    @property
    def context(self) -> str:
        return f"audit:{self.pk}"


class AuditAssessment(models.Model):
    plan = models.ForeignKey(AuditPlan, on_delete=models.PROTECT, related_name="assessments")
    accepted = models.BooleanField()
    complete = models.BooleanField()
    result = models.JSONField()
    result_root = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"assessment {self.pk} ({'accepted' if self.accepted else 'blocked'})"


class Signoff(models.Model):
    """``native_release_signoff_v1``: the release approver's six confirmations for one target."""

    class Mode(models.TextChoices):
        AUDIT = "audit", "Accepted batch audit (test split)"
        INDIVIDUAL = "individual", "Individually approved parents (development split)"

    mode = models.CharField(max_length=12, choices=Mode.choices)
    assessment = models.ForeignKey(
        AuditAssessment, null=True, blank=True, on_delete=models.PROTECT, related_name="signoffs"
    )
    split = models.CharField(max_length=20)
    problem_ids = models.JSONField()
    target_root = models.CharField(max_length=64)
    confirmations = models.JSONField()
    evidence_ref = models.CharField(max_length=200)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    release = models.ForeignKey(
        "probes.Release", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(mode="individual") | Q(assessment__isnull=False),
                name="audit_signoff_needs_assessment",
            )
        ]

    def __str__(self) -> str:
        return f"signoff {self.pk} ({self.mode})"


class KitDraftImport(models.Model):
    """A Kit native draft whose roots bind Kit decision files to our probes (review/kit_decisions.py).

    ``catalog`` is the Kit's private catalog (it names candidate types): admin-only, like a probe key."""

    catalog_root = models.CharField(max_length=64, unique=True)
    project_id = models.CharField(max_length=80, blank=True)  # the Kit review project (context root), if any
    catalog = models.JSONField()
    summary = models.JSONField(default=dict)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"kit draft {self.catalog_root[:12]}"


class KitProbeBinding(models.Model):
    """One Kit probe found equal to ours: its Kit roots, and our root at the time of the check."""

    draft = models.ForeignKey(KitDraftImport, on_delete=models.CASCADE, related_name="bindings")
    probe = models.ForeignKey("probes.Probe", on_delete=models.CASCADE, related_name="kit_bindings")
    kit_content_root = models.CharField(max_length=64)
    kit_review_target_root = models.CharField(max_length=64)
    review_target_root = models.CharField(max_length=64)
    same_bytes = models.BooleanField()  # every asset's bytes equal too (not only its pixels)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["draft", "probe"]
        constraints = [models.UniqueConstraint(fields=["draft", "probe"], name="kit_binding_once_per_draft")]

    def __str__(self) -> str:
        return f"{self.probe_id} ~ {self.kit_review_target_root[:12]}"


class KitDecision(ImmutableRow):
    """One imported Kit review decision, as evidence bound to our probe's root at import.

    ``kit_reviewer`` is provenance text from the file, never a link to an account; ``imported_by`` is who
    imported it (an admin, or null for an operator's manage.py)."""

    draft = models.ForeignKey(KitDraftImport, on_delete=models.PROTECT, related_name="decisions")
    probe = models.ForeignKey("probes.Probe", on_delete=models.CASCADE, related_name="kit_decisions")
    schema_version = models.CharField(max_length=40)
    context_root = models.CharField(max_length=80, blank=True)
    role = models.CharField(max_length=12, choices=Role.choices)
    file_sha256 = models.CharField(max_length=64)
    kit_review_target_root = models.CharField(max_length=64)
    review_target_root = models.CharField(max_length=64)
    status = models.CharField(max_length=8, choices=ReviewDecision.Status.choices)
    severity = models.CharField(max_length=12, choices=Severity.choices)
    confirmations = models.JSONField()
    blind_answer = models.TextField()
    kit_reviewer = models.CharField(max_length=200)
    note = models.TextField(blank=True)
    sequence = models.PositiveIntegerField(null=True, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["probe", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["probe", "review_target_root", "role", "context_root"],
                name="kit_decision_once_per_root",
            ),
            models.CheckConstraint(
                condition=Q(status="rejected") | Q(severity__in=["none", "minor"]),
                name="kit_approval_needs_none_or_minor",
            ),
            models.CheckConstraint(
                condition=Q(status="approved") | ~Q(severity__in=["none", "minor"]),
                name="kit_rejection_needs_a_defect_severity",
            ),
        ]

    def __str__(self) -> str:
        return f"kit {self.status} {self.probe_id} ({self.kit_reviewer})"
