"""The agreement pages' filter (GET): which double-annotation sample (blank: every one) and the region IoU
threshold."""

from __future__ import annotations

from typing import Any

from django import forms

from .core import DEFAULT_THRESHOLD
from .selectors import sample_choices


class AgreementFilterForm(forms.Form):
    sample = forms.TypedChoiceField(
        label="Sample", required=False, coerce=int, empty_value=None, help_text="Blank: every sample."
    )
    threshold = forms.FloatField(
        label="IoU threshold",
        required=False,
        min_value=0.01,
        max_value=1.0,
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": str(DEFAULT_THRESHOLD)}),
        help_text="Two regions below it are not a match (default 0.5).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["sample"].choices = [("", "Every sample"), *sample_choices()]  # type: ignore[attr-defined]

    def sample_id(self) -> int | None:
        return self.cleaned_data.get("sample")

    def threshold_value(self) -> float:
        value = self.cleaned_data.get("threshold")
        return DEFAULT_THRESHOLD if value is None else float(value)


def filter_form(query: Any) -> AgreementFilterForm:
    return AgreementFilterForm(query)


def form_errors(form: forms.Form) -> str:
    return " ".join(str(e) for errors in form.errors.values() for e in errors)
