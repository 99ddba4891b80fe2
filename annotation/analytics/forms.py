"""The period form of the analytics page (GET): from and to dates, both included; a blank one is open."""

from __future__ import annotations

from typing import Any

from django import forms

from .selectors import Period

HTML_NAMES = {"start": "from", "end": "to"}


class PeriodForm(forms.Form):
    start = forms.DateField(
        label="From",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="First day, included.",
    )
    end = forms.DateField(
        label="To",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Last day, included.",
    )

    def add_prefix(self, field_name: str) -> str:
        # the URL says ?from=…&to=… (Python keywords, so not the fields' own names)
        return HTML_NAMES.get(field_name, field_name)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and start > end:
            raise forms.ValidationError(
                "The period's first day comes after its last day.", code="period_reversed"
            )
        return cleaned

    def period(self) -> Period:
        return Period(self.cleaned_data.get("start"), self.cleaned_data.get("end"))


def period_form(query: Any) -> PeriodForm:
    """The form for a request's GET parameters: with neither ``from`` nor ``to`` given, the default period (the
    last 30 days) filled in; ``?from=&to=`` is all time."""
    if "from" not in query and "to" not in query:
        default = Period.default()
        return PeriodForm({"from": str(default.first_day or ""), "to": str(default.last_day or "")})
    return PeriodForm(query)
