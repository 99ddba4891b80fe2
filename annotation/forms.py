"""Forms for the server-rendered annotation pages (filters and import uploads)."""

from __future__ import annotations

import zipfile
from typing import Any, cast

from django import forms
from django.conf import settings

from .models import ImportJob, ParentProblem
from .selectors import WORK_STATES


class ProblemFilterForm(forms.Form):
    """GET filters of the problem list. Choices come from the data (``parent_facets``)."""

    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "Problem id, text or sample id",
                "autocomplete": "off",
                "spellcheck": "false",
            }
        ),
    )
    source = forms.ChoiceField(required=False, label="Source")
    language = forms.ChoiceField(required=False, label="Language")
    domain = forms.ChoiceField(required=False, label="Domain")
    status = forms.ChoiceField(required=False, label="Status")
    work = forms.ChoiceField(required=False, label="Passes 1–4")

    def __init__(self, data=None, *, facets: dict[str, list[str]]) -> None:
        super().__init__(data)
        any_choice = [("", "Any")]
        languages = dict(ParentProblem.Language.choices)
        statuses = dict(ParentProblem.Status.choices)
        self._choice_field("source").choices = any_choice + [(name, name) for name in facets["sources"]]
        self._choice_field("language").choices = any_choice + [
            (code, languages.get(code, code)) for code in facets["languages"]
        ]
        self._choice_field("domain").choices = any_choice + [(name, name) for name in facets["domains"]]
        self._choice_field("status").choices = any_choice + [
            (code, statuses.get(code, code)) for code in facets["statuses"]
        ]
        self._choice_field("work").choices = any_choice + [
            (key, label) for key, (label, _) in WORK_STATES.items()
        ]

    def _choice_field(self, name: str) -> forms.ChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        return field

    def filters(self) -> dict[str, str]:
        """The valid filter values; an invalid value (e.g. a stale bookmark) is ignored, not an error."""
        self.is_valid()
        cleaned = getattr(self, "cleaned_data", {})
        return {
            "search": (cleaned.get("q") or "").strip(),
            "source": cleaned.get("source") or "",
            "language": cleaned.get("language") or "",
            "domain": cleaned.get("domain") or "",
            "status": cleaned.get("status") or "",
            "work": cleaned.get("work") or "",
        }


class ImportUploadForm(forms.Form):
    kind = forms.ChoiceField(
        choices=ImportJob.Kind.choices,
        label="What are you importing?",
        widget=forms.RadioSelect,
        initial=ImportJob.Kind.PROBLEMS,
    )
    file = forms.FileField(
        label="Zip archive", widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"})
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.PHYSALIGN_IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the upload limit is {limit:,} bytes.", code="too_large"
            )
        # A cheap early check so a wrong file gets a clear message instead of a failed job.
        position = upload.tell()
        try:
            is_zip = zipfile.is_zipfile(upload)
        finally:
            upload.seek(position)
        if not is_zip:
            raise forms.ValidationError(
                "This file is not a zip archive. Upload a .zip with a problems manifest (JSONL + images) "
                "or a Kit source workspace.",
                code="not_zip",
            )
        return upload


class WorkspaceExportForm(forms.Form):
    """What a Kit workspace export holds: every problem, one source's, or the problems listed."""

    source = forms.ChoiceField(label="Source", required=False)
    problem_ids = forms.CharField(
        label="Only these problems",
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "problem ids, separated by spaces or new lines"}
        ),
        help_text="Leave empty for every problem (of the source).",
    )
    approved_only = forms.BooleanField(
        label="Only problems whose Passes 1–4 are all approved (what the Kit's converter compiles)",
        required=False,
    )

    def __init__(self, *args: Any, sources: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["source"]).choices = [
            ("", "Every source"),
            *((name, name) for name in sources),
        ]

    def clean_problem_ids(self) -> list[str]:
        return sorted(set(self.cleaned_data["problem_ids"].split()))
