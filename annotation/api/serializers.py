"""Output shapes shared by several annotation API views. Input serializers live next to their view.

Private fields (answer, solution) exist only on ``ParentDetailPrivateOutput``; the view chooses that
serializer for admins, so for everyone else the keys are absent rather than blank.
"""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from physalign_site.api import JSON_VALUE_REF, choice_string, json_list, json_object, json_value

from ..models import ImportJob, ParentProblem, PassDocument, ProblemImage, Source, WorkspaceExport

STRINGS = {"type": "string"}
STRING_LIST = {"type": "array", "items": STRINGS}
OPTION = {
    "type": "object",
    "properties": {"id": STRINGS, "text": STRINGS},
    "required": ["id", "text"],
}
# ``annotation.importers.report``: an issue is a code and a sentence, plus details named by the code
ISSUE = {
    "type": "object",
    "properties": {"code": STRINGS, "message": STRINGS},
    "required": ["code", "message"],
    "additionalProperties": JSON_VALUE_REF,
}
ISSUES = {"type": "array", "items": ISSUE}
IMPORT_REPORT = {
    "type": "object",
    "description": "What the import did (``ImportReport.as_dict()``); {} until it has run.",
    "properties": {
        "kind": STRINGS,
        "status": {"type": "string", "description": "succeeded | failed"},
        "counts": {
            "type": "object",
            "description": "rows, created, updated, unchanged, refused, rejected, not_imported, refusals, "
            "errors, warnings",
            "additionalProperties": {"type": "integer"},
        },
        "errors": ISSUES,
        "warnings": ISSUES,
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": STRINGS,
                    "outcome": {"type": "string", "description": "created | updated | refused | unchanged"},
                    "changed": {
                        "type": "object",
                        "description": "field → {before, after}",
                        "additionalProperties": {"type": "object", "additionalProperties": JSON_VALUE_REF},
                    },
                    "refused": {
                        "type": "object",
                        "description": "field → {stored, file}",
                        "additionalProperties": {"type": "object", "additionalProperties": JSON_VALUE_REF},
                    },
                },
            },
        },
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "row": {"type": "integer", "description": "The 1-based line of the manifest"},
                    "problem_id": STRINGS,
                    "outcome": {
                        "type": "string",
                        "description": "created | updated | unchanged | refused | rejected | not_imported",
                    },
                    "changed": STRING_LIST,
                    "refused": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"code": STRINGS, "message": STRINGS, "fields": STRING_LIST},
                        },
                    },
                    "errors": ISSUES,
                    "warnings": ISSUES,
                },
            },
        },
    },
}


class SourceOutput(serializers.ModelSerializer):
    class Meta:
        model = Source
        fields = ["id", "name", "license", "url", "created_at"]
        read_only_fields = fields


class ImageOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = ProblemImage
        fields = ["image_id", "width", "height", "sha256", "pixels_sha256", "media_type", "url"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, image: ProblemImage) -> str | None:
        # Resolved per call: the permission-checked file view is registered by the pages app.
        try:
            return reverse("annotation:image_file", args=[image.parent.problem_id, image.image_id])
        except NoReverseMatch:
            return None


class PassSummaryOutput(serializers.ModelSerializer):
    status = choice_string(PassDocument.Status.choices)
    approval_is_fresh = serializers.BooleanField(read_only=True)

    class Meta:
        model = PassDocument
        fields = ["pass_no", "status", "version", "document_sha256", "approval_is_fresh"]
        read_only_fields = fields


class ParentListOutput(serializers.ModelSerializer):
    source = serializers.CharField(source="source.name", read_only=True)  # type: ignore[assignment]  # DRF takes declared fields off the class
    image_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = ParentProblem
        fields = [
            "problem_id",
            "source",
            "source_split",
            "source_sample_id",
            "language",
            "domain",
            "answer_type",
            "status",
            "version",
            "stem",
            "query",
            "image_count",
            "updated_at",
        ]
        read_only_fields = fields


class ParentDetailOutput(serializers.ModelSerializer):
    source = SourceOutput(read_only=True)  # type: ignore[assignment]  # DRF takes declared fields off the class
    options = json_list(OPTION, read_only=True, description="The answer options, in order ([] without).")
    segmentation = json_object(
        "The Kit segmentation of the statement and question (the Kit manifest's ``segmentation``).",
        read_only=True,
    )
    images = ImageOutput(many=True, read_only=True)
    passes = PassSummaryOutput(many=True, read_only=True)

    class Meta:
        model = ParentProblem
        fields = [
            "problem_id",
            "source",
            "source_split",
            "source_sample_id",
            "language",
            "raw_question",
            "stem",
            "query",
            "options",
            "answer_type",
            "domain",
            "segmentation",
            "status",
            "version",
            "images",
            "passes",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class ParentDetailPrivateOutput(ParentDetailOutput):
    """Admins only (answer-blind protocol, paper §3.2)."""

    class Meta(ParentDetailOutput.Meta):
        fields = [*ParentDetailOutput.Meta.fields, "answer", "solution"]
        read_only_fields = fields


class ValidationIssueOutput(serializers.Serializer):
    code = serializers.CharField()
    path = serializers.CharField()
    message = serializers.CharField()
    record_id = serializers.CharField(required=False, help_text="physics findings only: the record's id")
    rule = serializers.CharField(required=False, help_text="physics findings only: the rule's code")
    severity = serializers.ChoiceField(
        choices=["warning", "blocking"],
        required=False,
        help_text="physics findings only (a warning never blocks); validator issues have none and always block",
    )


class RecordCommentInput(serializers.Serializer):
    record = serializers.RegexField(
        r"^[a-z_]+:[A-Za-z0-9_]+$", help_text="<collection>:<id> of a record of the reviewed document"
    )
    text = serializers.CharField(max_length=2000)


class RecordCommentOutput(serializers.Serializer):
    record = serializers.CharField(help_text="<collection>:<id>")
    text = serializers.CharField()
    by = serializers.CharField(help_text="the source reviewer")
    decision = serializers.CharField(help_text="approved or rejected: the review the comment came with")


class PassStateOutput(serializers.Serializer):
    """A pass document plus what the validator says about it (``validation_issues`` in context)."""

    pass_no = serializers.IntegerField()
    status = choice_string(PassDocument.Status.choices)
    version = serializers.IntegerField(
        help_text="the save counter: send it as If-Match (it is the ETag); it grows on every save"
    )
    history_version = serializers.IntegerField(
        help_text="the number of the newest history version (…/versions/<n>/): one user's autosaves close "
        "together are one version, so it grows more slowly than version (0: none kept yet)"
    )
    document = json_object("The Kit pass document of this pass (Kit §2.4: pass 1–5).")
    document_sha256 = serializers.CharField()
    approval_is_fresh = serializers.BooleanField(
        help_text="approved, for this document's hash and for the problem's current content (DESIGN §5)"
    )
    approved_sha256 = serializers.CharField()
    approved_parent_sha256 = serializers.CharField(
        help_text="the problem content hash (statement, question, options, image bytes) the approval was given for"
    )
    parent_content_sha256 = serializers.CharField(
        source="parent.content_sha256", help_text="the problem's content hash now"
    )
    approval_stale_reasons = serializers.ListField(
        child=serializers.CharField(),
        help_text="why an approval on record no longer holds: document, problem (its content changed) and/or "
        "upstream (a pass it builds on changed: approval_upstream_changed names them)",
    )
    approval_upstream_changed = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="the passes this one builds on saved after its approval, when that made it stale",
    )
    upstream_sha256 = serializers.CharField(help_text="the digest of the passes this one builds on, now")
    approved_upstream_sha256 = serializers.CharField(
        help_text="the digest of the passes this one builds on when it was approved"
    )
    approved_by = serializers.SerializerMethodField()
    approved_at = serializers.DateTimeField(allow_null=True)
    approval_origin = serializers.CharField(
        help_text="review (on the review page), import (carried in an "
        "imported file by an uploader allowed to approve), or '' (older)"
    )
    approval_provenance = serializers.CharField(help_text="the reviewer an imported file names (text only)")
    updated_by = serializers.SerializerMethodField()
    updated_at = serializers.DateTimeField()
    review_note = serializers.CharField()
    record_comments = serializers.SerializerMethodField(
        help_text="the last source review's comments on single records (in the response of one pass; empty "
        "in lists)"
    )
    validation_errors = serializers.SerializerMethodField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_approved_by(self, doc: PassDocument) -> str | None:
        return doc.approved_by.get_username() if doc.approved_by is not None else None

    @extend_schema_field(OpenApiTypes.STR)
    def get_updated_by(self, doc: PassDocument) -> str | None:
        return doc.updated_by.get_username() if doc.updated_by is not None else None

    @extend_schema_field(RecordCommentOutput(many=True))
    def get_record_comments(self, doc: PassDocument) -> list[dict[str, str]]:
        return list(self.context.get("record_comments", []))

    @extend_schema_field(ValidationIssueOutput(many=True))
    def get_validation_errors(self, doc: PassDocument) -> list[dict[str, str]]:
        return list(self.context.get("validation_issues", []))


class ImportJobOutput(serializers.ModelSerializer):
    status = choice_string(ImportJob.Status.choices)
    report = json_value(IMPORT_REPORT, read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "kind",
            "status",
            "original_name",
            "total",
            "done",
            "report",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


WORKSPACE_EXPORT_SUMMARY = {
    "type": "object",
    "description": "What the export wrote; {} until it is built.",
    "properties": {
        name: {"type": "integer"}
        for name in (
            "problems",
            "images",
            "pass_files",
            "approved_stages",
            "rejected_stages",
            "excluded",
            "files",
            "bytes",
            "skipped_not_approved",
        )
    },
}


class WorkspaceExportOutput(serializers.ModelSerializer):
    status = choice_string(WorkspaceExport.Status.choices)
    summary = json_value(WORKSPACE_EXPORT_SUMMARY, read_only=True)
    problem_ids = json_list(STRINGS, description="The problems asked for ([] = every problem of the source).")
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = WorkspaceExport
        fields = [
            "id",
            "status",
            "source",
            "problem_ids",
            "approved_only",
            "total",
            "done",
            "summary",
            "byte_size",
            "sha256",
            "error",
            "download_url",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "string", "nullable": True, "description": "Where the zip is, once ready."})
    def get_download_url(self, job: WorkspaceExport) -> str | None:
        if job.status != WorkspaceExport.Status.READY:
            return None
        return reverse("annotation-api:kit-workspace-export-download", kwargs={"job_id": job.pk})
