from __future__ import annotations

from django import forms

from models_registry.models import ModelConfig
from probes.models import Release

from .scoring import CONDITIONS


class RunLaunchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    release = forms.ModelChoiceField(
        queryset=Release.objects.all(), required=False, empty_label="All current probes (no release)"
    )
    models = forms.ModelMultipleChoiceField(
        queryset=ModelConfig.objects.filter(is_active=True),
        widget=forms.CheckboxSelectMultiple,
        to_field_name="name",
    )
    conditions = forms.MultipleChoiceField(
        choices=[(c, c) for c in CONDITIONS], widget=forms.CheckboxSelectMultiple, initial=["raw"]
    )
    interface = forms.ChoiceField(
        required=False,
        choices=[
            ("", "All interfaces"),
            ("T02-single", "T02-single"),
            ("T03-image", "T03-image"),
            ("T03-text", "T03-text"),
        ],
    )
    limit = forms.IntegerField(required=False, min_value=1, help_text="at most this many probes")
    resamples = forms.IntegerField(initial=2000, min_value=2, max_value=10000)
