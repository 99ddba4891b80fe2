"""Compile runs, probes and their private keys, rendered views, compile issues, releases (Kit §2.9–§2.14).

Private data lives only in ``ProbeKey`` (and a release's ``private/`` folder); reading it needs the
``admin`` role plus the ``probes.view_private_mapping`` permission (the "scorer" permission).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from kit.private_key import ProbeKeyView
from run_engine.rows import LeasedRow


class PromptTemplateSet(models.Model):
    """A versioned set of prompt templates + task questions (Kit §11 shapes); one is active."""

    name = models.CharField(max_length=100)
    template_version = models.CharField(max_length=100)
    prompts = models.JSONField()
    tasks = models.JSONField()
    normalizers = models.JSONField(null=True, blank=True)
    protocol = models.JSONField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, unique=True)
    is_active = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_active"], condition=Q(is_active=True), name="one_active_prompt_set"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.template_version})"


class CompileRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    seed = models.IntegerField(default=2027)
    profile = models.CharField(max_length=100, default="native_binding_draft_v1")
    parameters = models.JSONField(default=dict, blank=True)  # {"parent_ids": [...]} or {"all": true}
    prompt_set = models.ForeignKey(PromptTemplateSet, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)  # parents
    done = models.PositiveIntegerField(default=0)  # parents of the chunks done
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"compile run {self.pk} ({self.status})"

    @property
    def progress_percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else (100 if self.status == "succeeded" else 0)


class CompileChunk(LeasedRow):
    """Some parents of a compile run, compiled by one task (``probes.services.compile_chunk_execute``): claimed
    with a lease (``run_engine``), its output written in one transaction that replaces what an earlier claim of
    the same chunk wrote. Parents that share a source identity (so logical probe ids) are in one chunk."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(CompileRun, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    parent_ids = models.JSONField()  # ParentProblem pks, in problem_id order
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    counts = models.JSONField(default=dict, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="compile_chunk_number_unique")]

    def __str__(self) -> str:
        return f"chunk {self.number} of compile run {self.run_id} ({self.status})"


class Probe(models.Model):
    """The public side of one compiled probe, plus review state and pools."""

    class State(models.TextChoices):
        PENDING_REVIEW = "pending_review", "Pending review"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        SUPERSEDED = "superseded", "Superseded"

    class Split(models.TextChoices):
        DEVELOPMENT = "development_reserved", "Development (reserved)"
        UNASSIGNED = "candidate_unassigned_not_release", "Candidate (unassigned)"
        BLOCKED = "blocked", "Blocked"

    logical_probe_id = models.CharField(max_length=68, unique=True)
    parent = models.ForeignKey("annotation.ParentProblem", on_delete=models.CASCADE, related_name="probes")
    compile_run = models.ForeignKey(CompileRun, null=True, on_delete=models.SET_NULL, related_name="probes")
    task_id = models.CharField(max_length=3)
    interface = models.CharField(max_length=12)
    language = models.CharField(max_length=2)
    group_id = models.CharField(max_length=68)
    parent_group_id = models.CharField(max_length=68)
    evidence_group = models.CharField(max_length=68)
    content_group_hint = models.CharField(max_length=64)
    content_root = models.CharField(max_length=64)
    review_target_root = models.CharField(max_length=64)
    closure_root = models.CharField(max_length=64)
    packet_review_root = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING_REVIEW)
    packet_state = models.CharField(max_length=20, default="pending_review")
    split = models.CharField(max_length=40, choices=Split.choices, default=Split.UNASSIGNED)
    in_b = models.BooleanField(default=True)
    in_l = models.BooleanField(default=False)
    in_p = models.BooleanField(default=False)
    raw_view = models.JSONField()
    gold_view = models.JSONField()
    raw_messages = models.JSONField()
    gold_messages = models.JSONField()
    attachment_ids = models.JSONField()
    metadata = models.JSONField(default=dict)  # diagnostics (contains private candidate types)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["parent__problem_id", "logical_probe_id"]
        indexes = [
            models.Index(fields=["interface"]),
            models.Index(fields=["state"]),
            models.Index(fields=["split"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(task_id__in=["T02", "T03"]), name="probe_task_core"),
            models.CheckConstraint(
                condition=Q(interface__in=["T02-single", "T03-image", "T03-text"]),
                name="probe_interface_valid",
            ),
            models.CheckConstraint(
                condition=Q(in_p=False) | Q(packet_state="approved_nonempty"),
                name="probe_p_needs_approved_packet",
            ),
        ]

    def __str__(self) -> str:
        return self.logical_probe_id


class ProbeKey(models.Model):
    """Private mapping (Kit §2.9 ``key``): candidate map, gold, reads, anchors, packet plan."""

    probe = models.OneToOneField(Probe, on_delete=models.CASCADE, related_name="key")
    key = models.JSONField()
    native_query = models.JSONField()
    displays = models.JSONField()
    assets = models.JSONField()

    class Meta:
        permissions = [("view_private_mapping", "Can read private probe mappings (scorer)")]

    def __str__(self) -> str:
        return f"key of {self.probe_id}"

    @property
    def view(self) -> ProbeKeyView:
        """Typed read-only access to the key (``kit.private_key``)."""
        return ProbeKeyView(self.key)

    @property
    def gold_aliases(self) -> list[str]:
        return self.view.gold_aliases


class RenderedView(models.Model):
    """One rendered view of a probe. Its PNG is a file in the media storage at a content-addressed name
    (``probes.attachments.view_storage_name``: identical renders are stored once); read it through
    ``probes.attachments``."""

    probe = models.ForeignKey(Probe, on_delete=models.CASCADE, related_name="views")
    view_id = models.CharField(max_length=8)
    file = models.FileField(max_length=200)
    bytes_sha256 = models.CharField(max_length=64)
    pixels_sha256 = models.CharField(max_length=64)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    source_image_id = models.CharField(max_length=100)
    marks = models.JSONField()
    affine = models.JSONField()

    class Meta:
        ordering = ["probe", "view_id"]
        constraints = [models.UniqueConstraint(fields=["probe", "view_id"], name="view_id_unique_per_probe")]

    def __str__(self) -> str:
        return f"{self.probe_id}/{self.view_id}"


class CompileIssue(models.Model):
    run = models.ForeignKey(CompileRun, on_delete=models.CASCADE, related_name="issues")
    parent = models.ForeignKey(
        "annotation.ParentProblem", on_delete=models.CASCADE, related_name="compile_issues"
    )
    task_id = models.CharField(max_length=10)
    code = models.CharField(max_length=80)
    reasons = models.JSONField(default=list)
    scope = models.JSONField(default=list)
    group_id = models.CharField(max_length=68, blank=True)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["code", "parent_id"]
        indexes = [models.Index(fields=["run", "code"])]

    def __str__(self) -> str:
        return f"{self.code} @ {self.parent_id}"


class Membership(models.Model):
    """Per-parent membership (Kit §2.12): identity, exact dedup group and split."""

    parent = models.OneToOneField(
        "annotation.ParentProblem", on_delete=models.CASCADE, related_name="membership"
    )
    source_identity = models.CharField(max_length=64)
    content_group_hint = models.CharField(max_length=64)
    dedup_group = models.CharField(max_length=200)
    representative_id = models.CharField(max_length=180)
    dedup_state = models.CharField(max_length=30)
    split = models.CharField(max_length=40)
    tags = models.JSONField(default=list)

    class Meta:
        ordering = ["parent__problem_id"]

    def __str__(self) -> str:
        return f"{self.parent_id}: {self.split}"


class Release(models.Model):
    class Origin(models.TextChoices):
        EXPORTED = "exported", "Exported here"
        IMPORTED = "imported", "Imported kit release"

    release_id = models.CharField(max_length=70, unique=True)
    split = models.CharField(max_length=20)
    origin = models.CharField(max_length=10, choices=Origin.choices)
    artifact_mode = models.CharField(max_length=60)
    path = models.CharField(max_length=500)
    manifest = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)
    zip_status = models.CharField(max_length=10, default="none")  # none|queued|running|ready|failed
    zip_progress = models.PositiveSmallIntegerField(default=0)
    zip_path = models.CharField(max_length=500, blank=True)
    # the Hugging Face dataset of the public part, built by a worker (``probes.exports.hf``)
    hf_status = models.CharField(max_length=10, default="none")  # none|queued|running|ready|failed
    hf_error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.release_id


class ReleaseItem(models.Model):
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="items")
    logical_probe_id = models.CharField(max_length=68)
    instance_id = models.CharField(max_length=70)
    problem_id = models.CharField(max_length=180)
    interface = models.CharField(max_length=12)
    public_raw = models.JSONField()
    public_gold = models.JSONField(null=True, blank=True)
    private_mapping = models.JSONField()
    membership = models.JSONField()

    class Meta:
        ordering = ["release", "logical_probe_id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "logical_probe_id"], name="release_item_unique")
        ]

    def __str__(self) -> str:
        return f"{self.release_id}/{self.logical_probe_id}"
