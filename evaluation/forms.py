from __future__ import annotations

from typing import Any

from django import forms

from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError
from physalign_site.params import MAX_INT
from probes.models import Release

from .scoring import CONDITION_NAMES, CONDITIONS

INTERFACES = ("T02-single", "T03-image", "T03-text")  # probes.Probe.interface (its check constraint)
# The fields that choose which probes a run plans: one that does not validate is refused, never dropped
PLAN_FIELDS = ("release", "interface", "limit")


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
        choices=[(c, CONDITION_NAMES[c]) for c in CONDITIONS],
        widget=forms.CheckboxSelectMultiple,
        initial=["raw"],
    )
    interface = forms.ChoiceField(
        required=False,
        choices=[("", "All interfaces"), *((name, name) for name in INTERFACES)],
    )
    limit = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_INT, help_text="at most this many probes"
    )
    resamples = forms.IntegerField(initial=2000, min_value=2, max_value=10000)
    reuse_responses = forms.BooleanField(
        required=False,
        label="Reuse earlier responses",
        help_text="a request already answered completely by an earlier run with the same model settings "
        "takes that answer instead of a new call (errors, refusals and truncations are asked again)",
    )
    execution = forms.ChoiceField(
        choices=[
            ("direct", "Direct calls"),
            ("batch", "Provider batch API where the provider has one (about half the price, within 24 h)"),
        ],
        initial="direct",
        required=False,
        label="Execution",
        help_text="OpenAI, Anthropic and Gemini models are sent as provider batches, polled until they end; "
        "items that fail or expire are then called directly. Other models are called directly",
    )
    budget_usd = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=4,
        label="Budget (USD)",
        help_text="stop claiming requests when spent plus in-flight estimated cost would pass it; "
        "the run pauses with its rows pending and resumes once the budget is raised",
    )

    def run_options(self) -> dict[str, Any]:
        """The run options the launch sets from the validated form."""
        data = self.cleaned_data
        options: dict[str, Any] = {"resamples": data["resamples"]}
        if data.get("reuse_responses"):
            options["reuse_responses"] = True
        if data.get("budget_usd") is not None:
            options["budget_usd"] = str(data["budget_usd"])
        if data.get("execution") == "batch":
            options["execution"] = "batch"
        return options

    def batch_chosen(self) -> bool:
        """Whether the launch asks for provider batches (the preview prices them at the batch discount)."""
        if not self.is_bound:
            return False
        self.errors  # noqa: B018  (runs the validation once)
        return self.cleaned_data.get("execution") == "batch"

    def plan_arguments(self) -> dict[str, Any]:
        """What the run planner needs from the fields that validated (all of them once ``is_valid()``): the
        launch and the request-count preview pass the same arguments, so they plan the same rows. A field
        that chooses the probes (``PLAN_FIELDS``: a release id no release has, an unknown interface, a limit
        that is not a whole number from 1 to ``MAX_INT``) and does not validate is a 400 that names it: a
        plan without it would count, and launch, other probes than the ones asked for."""
        if self.is_bound:
            for name in PLAN_FIELDS:
                if name in self.errors:  # runs the validation once; cleaned_data then holds the valid fields
                    raise ApplicationError(
                        f"{name}: {self.errors[name][0]}",
                        code="invalid_parameter",
                        extra={"parameter": name},
                    )
            data: dict[str, Any] = self.cleaned_data
        else:
            data = {"conditions": self.fields["conditions"].initial, "models": []}
        return {
            "model_names": [m.name for m in data.get("models") or []],
            "conditions": list(data.get("conditions") or []),
            "release": data.get("release"),
            "probe_filter": {k: data[k] for k in ("interface", "limit") if data.get(k)},
        }
