from django.contrib import admin
from django.db import transaction

from audit.services import event_record

from .models import ImportJob, LLMDraft, ParentProblem, PassDocument, ProblemImage, Source
from .services import SOURCE_FIELDS


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["name", "license", "created_at"]
    search_fields = ["name"]

    def save_model(self, request, obj, form, change):  # noqa: ANN001, ANN201 (Django's signature)
        """Every change of a source's fields is in the audit log, whoever makes it and wherever."""
        names = [name for name in SOURCE_FIELDS if name in form.changed_data]
        before = {name: form.initial.get(name) for name in names} if change else None
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            if names or not change:
                event_record(
                    actor=request.user,
                    verb="source.update" if change else "source.create",
                    obj=obj,
                    before=before,
                    after={name: getattr(obj, name) for name in (names if change else SOURCE_FIELDS)},
                )


class ProblemImageInline(admin.TabularInline):
    model = ProblemImage
    extra = 0
    # one tuple for both: a list takes the type declared for fields (groups), which readonly_fields refuses
    fields = readonly_fields = ("image_id", "ordinal", "media_type", "width", "height", "sha256")
    can_delete = False


@admin.register(ParentProblem)
class ParentProblemAdmin(admin.ModelAdmin):
    list_display = ["problem_id", "source", "language", "domain", "answer_type", "status", "version"]
    list_filter = ["source", "language", "domain", "status", "answer_type"]
    search_fields = ["problem_id", "stem", "query", "source_sample_id"]
    inlines = [ProblemImageInline]


@admin.register(PassDocument)
class PassDocumentAdmin(admin.ModelAdmin):
    list_display = ["parent", "pass_no", "status", "version", "document_sha256", "approved_by"]
    list_filter = ["pass_no", "status"]
    search_fields = ["parent__problem_id"]
    readonly_fields = ["document_sha256", "approved_sha256", "approved_parent_sha256", "version"]


@admin.register(LLMDraft)
class LLMDraftAdmin(admin.ModelAdmin):
    list_display = ["parent", "pass_no", "model_label", "status", "created_at"]
    list_filter = ["pass_no", "status"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "done", "total", "created_by", "created_at"]
    list_filter = ["kind", "status"]
    readonly_fields = ["report"]
