"""Sources, parent problems, their images, pass documents (Kit §2.2–§2.4), LLM drafts and draft runs."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils import timezone

from run_engine.rows import LeasedRow

from .binding import PARENT_CONTENT_FIELDS, parent_content_sha256, upstream_digest

SAFE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,179}$"  # Kit §2.1 safe_id


class Source(models.Model):
    name = models.CharField(max_length=200, unique=True)
    license = models.CharField(max_length=500, blank=True)
    url = models.URLField(max_length=500, blank=True)
    # Strict assignment (``annotation.assignments``): only a problem's assigned annotator (and admins) may edit
    # its passes; otherwise an unassigned problem stays open to every annotator.
    assignment_strict = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ParentProblem(models.Model):
    class Language(models.TextChoices):
        EN = "en", "English"
        ZH = "zh", "Chinese"

    class AnswerType(models.TextChoices):
        CHOICE = "choice", "Multiple choice"
        FILL = "fill", "Fill in the blank"
        SHORT = "short", "Short answer"
        CALC = "calc", "Calculation"

    class Status(models.TextChoices):
        NEW = "new", "New"
        IN_ANNOTATION = "in_annotation", "In annotation"
        ANNOTATED = "annotated", "Passes 1–4 approved"
        EXCLUDED = "excluded", "Excluded"

    problem_id = models.CharField(max_length=180, unique=True)
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="problems")
    source_split = models.CharField(max_length=100)
    source_sample_id = models.CharField(max_length=300)
    language = models.CharField(max_length=2, choices=Language.choices)
    raw_question = models.TextField(blank=True)
    stem = models.TextField(blank=True)
    query = models.TextField(blank=True)
    options = models.JSONField(default=list, blank=True)  # [{"id": "A", "text": "..."}]
    # Private: never sent to passes 1–4, probe prompts, or any non-admin response.
    answer = models.TextField(blank=True)
    solution = models.TextField(blank=True)
    answer_type = models.CharField(max_length=10, choices=AnswerType.choices)
    domain = models.CharField(max_length=100, blank=True)
    segmentation = models.JSONField(default=dict, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEW)
    version = models.PositiveIntegerField(default=1)
    # An imported Kit workspace problem: the SHA-256 of the Kit's own source files (manifest row, review state,
    # pass files as their bytes) and what they were computed over; see annotation.selectors.kit_source_hashes.
    kit_source = models.JSONField(default=dict, blank=True)
    # parent_content_sha256 of the statement, question, options and image bytes as they are now (annotation.binding):
    # recomputed on every save of the parent's content and of its images; an approval is fresh only while the
    # hash it was given for is this one.
    content_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["problem_id"]
        constraints = [
            models.CheckConstraint(condition=Q(language__in=["en", "zh"]), name="parent_language_valid"),
            models.CheckConstraint(
                condition=Q(answer_type__in=["choice", "fill", "short", "calc"]),
                name="parent_answer_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["new", "in_annotation", "annotated", "excluded"]),
                name="parent_status_valid",
            ),
            models.CheckConstraint(
                condition=~Q(source_split="") & ~Q(source_sample_id=""), name="parent_source_identity_present"
            ),
        ]
        indexes = [
            models.Index(fields=["language"]),
            models.Index(fields=["domain"]),
            models.Index(fields=["status"]),
        ]

    def __str__(self) -> str:
        return self.problem_id

    def save(self, *args: Any, **kwargs: Any) -> None:
        update_fields = kwargs.get("update_fields")
        if update_fields is None or set(update_fields) & CONTENT_TRIGGERS:
            self.content_sha256 = parent_content_sha256(self)
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "content_sha256"}
        super().save(*args, **kwargs)


CONTENT_TRIGGERS = {*PARENT_CONTENT_FIELDS, "content_sha256"}


def parent_content_refresh(parent_id: int, *, cached: ParentProblem | None = None) -> None:
    """Bring ``ParentProblem.content_sha256`` up to date after one of its images changed."""
    parent = ParentProblem.objects.filter(pk=parent_id).only("pk", *CONTENT_TRIGGERS).first()
    if parent is None:
        return
    current = parent_content_sha256(parent)
    if current != parent.content_sha256:
        ParentProblem.objects.filter(pk=parent_id).update(content_sha256=current)
    if cached is not None:
        cached.content_sha256 = current


def problem_image_path(instance: ProblemImage, filename: str) -> str:
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else "bin"
    return f"problems/{instance.sha256[:2]}/{instance.sha256}.{suffix}"


class ProblemImage(models.Model):
    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="images")
    image_id = models.CharField(max_length=100)  # img_<n>; never starts with V (Kit §2.1)
    ordinal = models.PositiveIntegerField()
    file = models.FileField(upload_to=problem_image_path, max_length=300)
    original_name = models.CharField(max_length=300, blank=True)
    media_type = models.CharField(max_length=50)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    byte_size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    pixels_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["parent", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["parent", "image_id"], name="image_id_unique_per_parent"),
            models.UniqueConstraint(fields=["parent", "ordinal"], name="image_ordinal_unique_per_parent"),
            models.CheckConstraint(condition=~Q(image_id__startswith="V"), name="image_id_not_view_id"),
            models.CheckConstraint(condition=Q(width__gt=0) & Q(height__gt=0), name="image_size_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.parent.problem_id}/{self.image_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        cached = self.parent if type(self).parent.is_cached(self) else None
        parent_content_refresh(self.parent_id, cached=cached)


@receiver(post_delete, sender=ProblemImage)
def _image_deleted(
    sender: type[ProblemImage], instance: ProblemImage, origin: Any = None, **kwargs: Any
) -> None:
    if (origin.model if isinstance(origin, models.QuerySet) else type(origin)) is ParentProblem:
        return  # the parent goes too
    parent_content_refresh(instance.parent_id)


class PassDocument(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    class ApprovalOrigin(models.TextChoices):
        REVIEW = "review", "Reviewed in the app"
        IMPORT = "import", "Imported approval"

    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="passes")
    pass_no = models.PositiveSmallIntegerField()
    document = models.JSONField()
    document_sha256 = models.CharField(max_length=64)  # digest(document), Kit §2.0
    # Not stored: the issues ``pass_document_save`` found in the document it just stored (validator, then physics),
    # which the pass API answers with instead of checking the same document again; None on a loaded row.
    checked_issues: list[dict[str, Any]] | None = None
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    # The save counter for optimistic concurrency (If-Match, the ETag): it grows on every save, coalesced or not.
    # History numbers its versions on its own (``PassDocumentVersion.version``): autosaves coalesce there.
    version = models.PositiveIntegerField(default=1)
    # The number of its newest history version (0: none kept yet), kept by ``annotation.history``.
    history_version = models.PositiveIntegerField(default=0, db_default=0)
    # Approval is bound to what it was given for (annotation.binding): the document's hash and the parent's content
    # hash (statement, question, options, image bytes); it is fresh only while both still agree.
    approved_sha256 = models.CharField(max_length=64, blank=True)
    approved_parent_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    # ... and to the passes it builds on (``annotation.binding.upstream_digest``): ``upstream_sha256`` is their
    # digest now (kept by ``save`` of any pass of the parent), ``approved_upstream_sha256`` at the approval.
    upstream_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    approved_upstream_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    # How the approval was given: on the review page, or carried in an imported file (then ``approved_by`` is
    # the uploader who was allowed to approve, and ``approval_provenance`` the reviewer the file names; a
    # file's name is never linked to an account).
    approval_origin = models.CharField(max_length=10, choices=ApprovalOrigin.choices, blank=True)
    approval_provenance = models.CharField(max_length=200, blank=True)
    review_note = models.TextField(blank=True)
    # The physics checks' result at the last save (``annotation.physics``): {"rules_version": "...",
    # "findings": [{code, record_id, path, message, rule, severity}]}; {} until a check has run.
    physics_check = models.JSONField(default=dict, blank=True, db_default={})
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["parent", "pass_no"]
        constraints = [
            models.UniqueConstraint(fields=["parent", "pass_no"], name="one_document_per_pass"),
            models.CheckConstraint(condition=Q(pass_no__gte=1) & Q(pass_no__lte=5), name="pass_no_1_to_5"),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "submitted", "approved", "rejected"]),
                name="pass_status_valid",
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="pass_version_positive"),
            models.CheckConstraint(
                condition=~Q(status="approved") | ~Q(approved_sha256=""), name="approved_pass_has_hash"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.parent.problem_id} pass {self.pass_no} v{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        bound: set[str] = set()
        # An approval stored without an explicit binding is bound to what it builds on as it is now.
        siblings = list(
            PassDocument.objects.filter(parent_id=self.parent_id)
            .exclude(pk=self.pk)
            .values_list("pk", "pass_no", "document_sha256", "upstream_sha256")
        )
        hashes = {pass_no: sha for _, pass_no, sha, _ in siblings}
        hashes[self.pass_no] = self.document_sha256
        upstream = upstream_digest(self.pass_no, hashes)
        if upstream != self.upstream_sha256:
            self.upstream_sha256 = upstream
            bound.add("upstream_sha256")
        if self.status == self.Status.APPROVED:
            if not self.approved_parent_sha256:
                self.approved_parent_sha256 = (
                    ParentProblem.objects.filter(pk=self.parent_id)
                    .values_list("content_sha256", flat=True)
                    .first()
                    or ""
                )
                bound.add("approved_parent_sha256")
            if not self.approved_upstream_sha256:
                self.approved_upstream_sha256 = upstream
                bound.add("approved_upstream_sha256")
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and bound:
            kwargs["update_fields"] = {*update_fields, *bound}
        super().save(*args, **kwargs)
        # every later pass builds on this one: its upstream follows (its approval, bound to the old one, is stale)
        for pk, pass_no, _, stored in siblings:
            if pass_no > self.pass_no and stored != (now := upstream_digest(pass_no, hashes)):
                PassDocument.objects.filter(pk=pk).update(upstream_sha256=now)

    @property
    def approval_is_fresh(self) -> bool:
        """The one freshness rule (its SQL form is ``FRESH_APPROVAL``): approved, for this document's hash, and
        for the parent's current content."""
        return self.approval_fresh_for(self.parent.content_sha256)

    def approval_fresh_for(self, parent_content_sha256: str) -> bool:
        return (
            self.status == self.Status.APPROVED
            and self.approved_sha256 == self.document_sha256
            and bool(self.approved_parent_sha256)
            and self.approved_parent_sha256 == parent_content_sha256
            and self.approved_upstream_sha256 == self.upstream_sha256
        )

    @property
    def approval_stale_reasons(self) -> list[str]:
        """Why an approval on record no longer holds: ``document``, ``problem`` (its content changed) and/or
        ``upstream`` (a pass it builds on changed: ``approval_upstream_changed`` says which)."""
        if not self.approved_sha256:
            return []
        reasons = []
        if self.approved_sha256 != self.document_sha256:
            reasons.append("document")
        if not self.approved_parent_sha256 or self.approved_parent_sha256 != self.parent.content_sha256:
            reasons.append("problem")
        if self.approved_upstream_sha256 != self.upstream_sha256:
            reasons.append("upstream")
        return reasons

    @property
    def approval_upstream_changed(self) -> list[int]:
        """The passes this one builds on that were saved after its approval (those whose change made it stale),
        from the parent's passes (prefetched where a page lists many)."""
        if self.approved_upstream_sha256 == self.upstream_sha256 or self.approved_at is None:
            return []
        return sorted(
            doc.pass_no
            for doc in self.parent.passes.all()
            if doc.pass_no < self.pass_no and doc.updated_at >= self.approved_at
        )

    @property
    def approver_label(self) -> str:
        """Who approved, for people and for the compiler: the account, else the imported file's reviewer."""
        if self.approved_by is not None:
            return self.approved_by.get_username()
        return self.approval_provenance


# The fields ``PassDocument.approval_fresh_for`` reads: a query that loads documents with ``only()`` and then
# shows their freshness must load all of them, or each deferred one costs a query per document.
APPROVAL_FRESHNESS_FIELDS = (
    "status",
    "document_sha256",
    "approved_sha256",
    "approved_parent_sha256",
    "approved_upstream_sha256",
    "upstream_sha256",
)
# The freshness rule of ``PassDocument.approval_is_fresh`` as query conditions on PassDocument.
FRESH_APPROVAL = (
    Q(status=PassDocument.Status.APPROVED)
    & Q(approved_sha256=F("document_sha256"))
    & ~Q(approved_parent_sha256="")
    & Q(approved_parent_sha256=F("parent__content_sha256"))
    & Q(approved_upstream_sha256=F("upstream_sha256"))
)
STALE_APPROVAL = Q(status=PassDocument.Status.APPROVED) & (
    ~Q(approved_sha256=F("document_sha256"))
    | Q(approved_parent_sha256="")
    | ~Q(approved_parent_sha256=F("parent__content_sha256"))
    | ~Q(approved_upstream_sha256=F("upstream_sha256"))
)


class PassDocumentVersion(models.Model):
    """A state of a pass document kept for history, diffs and revert, numbered 1, 2, 3… per pass document.

    Autosaves coalesce (``annotation.coalescing``): a plain save by the author of the newest version, within the
    window of its last save while the document is a draft, replaces that version's document (the last one is
    always kept) and counts in ``save_count``; anything else starts a new version. ``document_version`` is the
    pass document's save counter (If-Match) at this version's last save."""

    pass_document = models.ForeignKey(PassDocument, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()  # the history number (not the If-Match save counter)
    document = models.JSONField()
    document_sha256 = models.CharField(max_length=64)
    document_version = models.PositiveIntegerField()
    saved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    saved_at = models.DateTimeField(default=timezone.now)  # the first save this version holds
    last_saved_at = models.DateTimeField(default=timezone.now)  # the last one (its document is this one's)
    save_count = models.PositiveIntegerField(default=1)
    # Only a plain save's version takes later saves: a revert, an accepted draft or an import stays as it was.
    absorbs_saves = models.BooleanField(default=False)
    source_draft = models.ForeignKey(
        "LLMDraft", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )  # set when this version came from accepting an LLM draft
    note = models.CharField(max_length=300, blank=True)  # e.g. "reverted to v3"

    class Meta:
        ordering = ["pass_document", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["pass_document", "version"], name="one_row_per_pass_version"),
            models.UniqueConstraint(
                fields=["pass_document", "document_version"], name="one_row_per_pass_save_counter"
            ),
            models.CheckConstraint(condition=Q(save_count__gte=1), name="pass_version_holds_a_save"),
            models.CheckConstraint(
                condition=Q(last_saved_at__gte=F("saved_at")), name="pass_version_last_save_after_first"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pass_document} @v{self.version}"


class DraftRun(models.Model):
    """One drafting request for one pass over one or many parents (a Celery batch with progress)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Finished"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    pass_no = models.PositiveSmallIntegerField()
    model_config = models.ForeignKey(
        "models_registry.ModelConfig", on_delete=models.PROTECT, related_name="+"
    )
    prompt_version = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(pass_no__gte=1) & Q(pass_no__lte=5), name="draftrun_pass_no_1_to_5"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "succeeded", "failed", "cancelled"]),
                name="draftrun_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"draft run #{self.pk} pass {self.pass_no} ({self.status})"


class LLMDraft(LeasedRow):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        READY = "ready", "Ready"
        INVALID = "invalid", "Output failed validation"
        FAILED = "failed", "Request failed"
        ACCEPTED = "accepted", "Accepted"
        DISCARDED = "discarded", "Discarded"

    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="llm_drafts")
    pass_no = models.PositiveSmallIntegerField()
    run = models.ForeignKey(DraftRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="drafts")
    model_config = models.ForeignKey(
        "models_registry.ModelConfig", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    model_label = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    request_record = models.JSONField(
        default=dict, blank=True
    )  # what was sent (texts, image hashes, settings)
    raw_output = models.TextField(blank=True)
    parsed_document = models.JSONField(null=True, blank=True)
    validation_errors = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    usage = models.JSONField(default=dict, blank=True)  # input/output/reasoning tokens
    attempts = models.JSONField(default=list, blank=True)  # one entry per provider attempt
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    accepted_into = models.ForeignKey(
        PassDocument, null=True, blank=True, on_delete=models.SET_NULL, related_name="accepted_drafts"
    )
    # Human edits relative to the draft when accepted: {"added": n, "removed": n, "changed": n, ...}
    acceptance = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(pass_no__gte=1) & Q(pass_no__lte=5), name="draft_pass_no_1_to_5"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "ready", "invalid", "failed", "accepted", "discarded"]),
                name="draft_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["parent", "pass_no"])]

    def __str__(self) -> str:
        return f"draft {self.parent.problem_id} pass {self.pass_no} ({self.model_label})"


class ImportJob(models.Model):
    """One upload or command run of an importer; the report lists every problem found."""

    class Kind(models.TextChoices):
        PROBLEMS = "problems", "Problems manifest (JSONL + images)"
        KIT_WORKSPACE = "kit_workspace", "Kit source workspace"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Imported"
        FAILED = "failed", "Nothing imported"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    upload = models.FileField(upload_to="imports/", max_length=300, blank=True)
    original_name = models.CharField(max_length=300, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["problems", "kit_workspace"]), name="import_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "succeeded", "failed"]),
                name="import_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"import #{self.pk} ({self.kind}, {self.status})"


class WorkspaceExport(models.Model):
    """One Kit source workspace export built by a worker as a zip (``annotation.exporters.jobs``): the selection
    it was asked for, its progress, and the stored zip. The zip holds private answers: admins only."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Building"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    source = models.CharField(max_length=200, blank=True)  # "" = every source
    problem_ids = models.JSONField(default=list, blank=True)  # [] = every problem (of the source)
    approved_only = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    file = models.FileField(upload_to="exports/kit_workspace/", max_length=300, blank=True)
    byte_size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "ready", "failed"]),
                name="workspace_export_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"workspace export #{self.pk} ({self.status})"


class SourceReview(models.Model):
    """One source-review decision on a pass document, with the exact document it was given for (what the
    next review's "changes since the last review" compare against) and its per-record comments."""

    class Decision(models.TextChoices):
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    pass_document = models.ForeignKey(PassDocument, on_delete=models.CASCADE, related_name="source_reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    note = models.TextField(blank=True)
    document = models.JSONField()
    document_sha256 = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pass_document", "-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=["approved", "rejected"]), name="source_review_decision_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pass_document} {self.decision} v{self.version}"


class RecordComment(models.Model):
    """A source reviewer's comment on one record (``<collection>:<id>``) of the document they reviewed."""

    review = models.ForeignKey(SourceReview, on_delete=models.CASCADE, related_name="comments")
    collection = models.CharField(max_length=40)
    record_id = models.CharField(max_length=40)
    text = models.TextField()

    class Meta:
        ordering = ["review", "pk"]

    def __str__(self) -> str:
        return f"{self.collection}:{self.record_id}"


class PhysicsRuleSetting(models.Model):
    """An admin's choice for one physics rule (``annotation.physics``, by its ``PHYS_…`` code): a blocking
    rule refuses submit; a rule without a row is a warning."""

    code = models.CharField(max_length=64, unique=True)
    blocking = models.BooleanField(default=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} ({'blocking' if self.blocking else 'warning'})"


class OcrRun(models.Model):
    """One worker job proposing Pass 1 text regions with Tesseract (``annotation.ocr``): for one problem or for
    every problem of a source, with its progress and the preprocessing it ran with."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    parent = models.ForeignKey(
        ParentProblem, null=True, blank=True, on_delete=models.CASCADE, related_name="ocr_runs"
    )
    options = models.JSONField(default=dict, blank=True)  # preprocessing (scale, binarize, psm) and versions
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]), name="ocr_run_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"ocr run #{self.pk} ({self.status})"


class OcrProposal(models.Model):
    """One text region Tesseract proposed on one image, and what the annotator did with it: accepted as
    proposed, accepted after an edit (box or text), or dropped. ``visual_id`` is the Pass 1 record it became."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        ACCEPTED = "accepted", "Accepted"
        EDITED = "edited", "Accepted with edits"
        DROPPED = "dropped", "Dropped"

    run = models.ForeignKey(OcrRun, on_delete=models.CASCADE, related_name="proposals")
    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="ocr_proposals")
    image = models.ForeignKey(ProblemImage, on_delete=models.CASCADE, related_name="+")
    bbox_1000 = models.JSONField()  # [x_min, y_min, x_max, y_max], Kit §2.6
    text = models.CharField(max_length=500)
    confidence = models.FloatField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PROPOSED)
    visual_id = models.CharField(max_length=40, blank=True)
    final_bbox_1000 = models.JSONField(null=True, blank=True)
    final_text = models.CharField(max_length=500, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["parent", "image", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["proposed", "accepted", "edited", "dropped"]),
                name="ocr_proposal_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["parent", "status"])]

    def __str__(self) -> str:
        return f"ocr {self.text!r} ({self.status})"


class Assignment(models.Model):
    """Who is to do a problem's work (``annotation.assignments``): its annotator, or its source reviewer, with an
    optional due date. One assignee per problem and role."""

    class Role(models.TextChoices):
        ANNOTATOR = "annotator", "Annotator"
        SOURCE_REVIEWER = "source_reviewer", "Source reviewer"

    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="assignments")
    role = models.CharField(max_length=20, choices=Role.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    due_date = models.DateField(null=True, blank=True)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["parent", "role"]
        constraints = [
            models.UniqueConstraint(fields=["parent", "role"], name="one_assignee_per_parent_and_role"),
            models.CheckConstraint(
                condition=Q(role__in=["annotator", "source_reviewer"]), name="assignment_role_valid"
            ),
        ]
        indexes = [models.Index(fields=["user", "role"])]

    def __str__(self) -> str:
        return f"{self.parent_id} {self.role} → {self.user_id}"


class DoubleAnnotationSample(models.Model):
    """An admin's request for a second, independent annotation of a seeded sample of one source's parents
    (``annotation.double``): a fraction or a count, drawn with ``seed``."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="double_samples")
    fraction = models.FloatField(null=True, blank=True)
    count = models.PositiveIntegerField(null=True, blank=True)
    seed = models.IntegerField(default=2027)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(fraction__isnull=False) & Q(count__isnull=True))
                | (Q(fraction__isnull=True) & Q(count__isnull=False)),
                name="double_sample_fraction_or_count",
            ),
            models.CheckConstraint(
                condition=Q(fraction__isnull=True) | (Q(fraction__gt=0) & Q(fraction__lte=1)),
                name="double_sample_fraction_in_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"double annotation sample #{self.pk} of {self.source_id}"


class SecondAnnotation(models.Model):
    """One parent of a double-annotation sample and its independent second annotator, who never sees the first
    annotation (``annotation.double.blind``)."""

    sample = models.ForeignKey(DoubleAnnotationSample, on_delete=models.CASCADE, related_name="parents")
    parent = models.OneToOneField(ParentProblem, on_delete=models.CASCADE, related_name="second_annotation")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="second_annotations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["parent"]
        indexes = [models.Index(fields=["annotator"])]

    def __str__(self) -> str:
        return f"second annotation of {self.parent_id} by {self.annotator_id}"


class IndependentPassDocument(models.Model):
    """The second annotator's own document of one pass, from the same images and text; it never compiles
    (curation may carry its records into the first annotator's document)."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"

    second = models.ForeignKey(SecondAnnotation, on_delete=models.CASCADE, related_name="documents")
    pass_no = models.PositiveSmallIntegerField()
    document = models.JSONField()
    document_sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    version = models.PositiveIntegerField(default=1)  # the If-Match save counter
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["second", "pass_no"]
        constraints = [
            models.UniqueConstraint(fields=["second", "pass_no"], name="one_independent_document_per_pass"),
            models.CheckConstraint(
                condition=Q(pass_no__gte=1) & Q(pass_no__lte=4), name="independent_pass_no_1_to_4"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "submitted"]), name="independent_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"independent {self.second.parent_id} pass {self.pass_no} v{self.version}"

    # What the workspace page reads of a pass document (``annotation.workspace_page``): an independent document
    # has no history of its own, is never approved and carries no review note.
    @property
    def history_version(self) -> int:
        return self.version

    approval_is_fresh = False
    approved_sha256 = ""
    review_note = ""


class Curation(models.Model):
    """A curator's reconciliation of the two annotations of one pass (``annotation.curation``): one choice per
    matched record, and the curated document it produced (saved as a version of the first annotator's pass)."""

    parent = models.ForeignKey(ParentProblem, on_delete=models.CASCADE, related_name="curations")
    pass_no = models.PositiveSmallIntegerField()
    # [{"collection", "first", "second", "keep": "first" | "second" | ...}]
    choices = models.JSONField(default=list)
    first_sha256 = models.CharField(max_length=64)
    second_sha256 = models.CharField(max_length=64)
    result_sha256 = models.CharField(max_length=64)
    curator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(pass_no__gte=1) & Q(pass_no__lte=4), name="curation_pass_no_1_to_4"
            ),
        ]

    def __str__(self) -> str:
        return f"curation of {self.parent_id} pass {self.pass_no}"
