"""The admins' form asking for a double-annotation sample."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from physalign_site.roles import ADMIN, ANNOTATOR

from ..models import Source


def second_annotator_choices() -> Any:
    """Active annotators who are not admins (admins see every annotation: they cannot annotate blind)."""
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name=ANNOTATOR, is_superuser=False)
        .exclude(groups__name=ADMIN)
        .distinct()
        .order_by("username")
    )


class SampleForm(forms.Form):
    source = forms.ModelChoiceField(queryset=Source.objects.order_by("name"), to_field_name="name")
    size = forms.CharField(
        label="Sample size",
        help_text="A count of parents (e.g. 10) or a fraction (e.g. 0.1 or 10%).",
        max_length=20,
    )
    seed = forms.IntegerField(initial=2027, help_text="The same seed draws the same parents.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="The second annotators, spread evenly (never one who worked on the parent's first annotation).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = second_annotator_choices()  # type: ignore[attr-defined]

    def clean_size(self) -> dict[str, Any]:
        raw = self.cleaned_data["size"].strip()
        try:
            if raw.endswith("%"):
                return {"fraction": float(raw[:-1]) / 100, "count": None}
            if "." in raw:
                return {"fraction": float(raw), "count": None}
            return {"fraction": None, "count": int(raw)}
        except ValueError:
            raise forms.ValidationError(
                "Give a whole number of parents or a fraction such as 0.1 or 10%."
            ) from None
