"""The forms of the solving pages: launching a solve run of either kind (the parents from a release, a problem
source or typed ids, read by ``physalign_site.idlists.parse_id_list``) and an expert's grade."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms

from annotation.models import Source
from models_registry.models import ModelConfig
from physalign_site.idlists import parse_id_list
from probes.models import Release

from .debate.frontend import FrontendSwitches
from .debate.orchestrator import DebateConfig
from .launch_choices import problem_sources, solver_models, source_label, source_parent_ids
from .runs import LEVELS, SETTING_FIELDS

_DEBATE_DEFAULTS = DebateConfig()
_FRONTEND_DEFAULTS = FrontendSwitches()


class SourceChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return source_label(obj)


class RunLaunchForm(forms.Form):
    """What both kinds' launch forms share: the parents come from a release, a problem source or typed ids
    (``parents_required``: exactly one of the three, else at most one), and ``launch_kwargs()`` is what the
    kind's create service takes."""

    parents_required = False
    parents_message = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._model_choice_field("source").queryset = problem_sources()

    def _model_choice_field(self, name: str) -> forms.ModelChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ModelChoiceField)
        return field

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        ids = parse_id_list(data.get("parent_ids"))
        given = sum(bool(x) for x in (data.get("release"), data.get("source"), ids))
        if given > 1 or (self.parents_required and given != 1):
            raise forms.ValidationError(self.parents_message)
        data["parent_id_list"] = source_parent_ids(data["source"]) if data.get("source") else ids
        return data

    def parents_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "release": data["release"],
            "parent_ids": data["parent_id_list"] or None,
            "name": data["name"],
        }

    def launch_kwargs(self) -> dict[str, Any]:
        raise NotImplementedError


class SolveLaunchForm(RunLaunchForm):
    parents_required = True
    parents_message = (
        "Choose a release, a problem source or list parent problem ids (exactly one of the three)."
    )

    model = forms.ModelChoiceField(
        queryset=ModelConfig.objects.none(),
        empty_label=None,
        help_text="Active models that can solve a problem (the OCR probe baseline cannot).",
    )
    release = forms.ModelChoiceField(
        queryset=Release.objects.all(),
        required=False,
        empty_label="— none —",
        help_text="Solve every parent problem of this release…",
    )
    source = SourceChoiceField(
        queryset=Source.objects.none(),
        required=False,
        empty_label="— none —",
        label="Problem source",
        help_text="…or every parent problem of this source…",
    )
    parent_ids = forms.CharField(
        required=False,
        label="Parents",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="…or these parent problem ids (comma, space or new-line separated).",
    )
    name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._model_choice_field("model").queryset = solver_models()

    def launch_kwargs(self) -> dict[str, Any]:
        return {"model": self.cleaned_data["model"], **self.parents_kwargs()}


def _model_choices(blank: str) -> list[tuple[str, str]]:
    names = solver_models().values_list("name", "provider")
    return [("", blank), *[(name, f"{name} ({provider})") for name, provider in names]]


STAGE_MODEL_FIELDS = ("solver_1", "solver_2", "solver_3", "pruner", "selector", "extractor", "frontend")

# A cleared number field falls back to the solver's default.
_NUMBER_DEFAULTS = {
    "max_resolve_rounds": _DEBATE_DEFAULTS.max_resolve_rounds,
    "rel_tol": _DEBATE_DEFAULTS.rel_tol,
    "ocr": _FRONTEND_DEFAULTS.ocr,
    "verify_iterations": _FRONTEND_DEFAULTS.verify_iterations,
    "svg_char_cap": _FRONTEND_DEFAULTS.svg_char_cap,
}


class DebateLaunchForm(RunLaunchForm):
    parents_message = "Choose a release, a problem source or list parent problem ids, only one of the three."

    name = forms.CharField(max_length=200, required=False)
    level = forms.TypedChoiceField(
        choices=[(n, f"Level {n}: {label}") for n, label in LEVELS.items()], coerce=int, initial=1
    )
    release = forms.ModelChoiceField(
        queryset=Release.objects.all(),
        required=False,
        to_field_name="release_id",
        empty_label="—",
        help_text="Every parent problem of this release.",
    )
    source = SourceChoiceField(
        queryset=Source.objects.none(),
        required=False,
        empty_label="—",
        label="Problem source",
        help_text="Every parent problem of this source.",
    )
    parent_ids = forms.CharField(
        required=False,
        label="Parents",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Parent problem ids, separated by commas, spaces or lines.",
    )
    solver_1 = forms.ChoiceField(label="Solver 1 (default solver)")
    solver_2 = forms.ChoiceField(required=False, label="Solver 2")
    solver_3 = forms.ChoiceField(required=False, label="Solver 3")
    pruner = forms.ChoiceField(required=False, help_text="Default: solver 2 (Debate §3.3.2).")
    selector = forms.ChoiceField(required=False, help_text="Without one, the default solver decides ties.")
    extractor = forms.ChoiceField(required=False, label="Light answer extractor")
    frontend = forms.ChoiceField(
        required=False, label="Front-end model", help_text="Cropper, OCR, SVG, reconstructor."
    )
    pruning = forms.BooleanField(required=False, initial=_DEBATE_DEFAULTS.pruning)
    strict_pruning = forms.BooleanField(
        required=False, initial=_DEBATE_DEFAULTS.strict_pruning, help_text="Mask 'not sure' too."
    )
    value_voting = forms.BooleanField(
        required=False, initial=_DEBATE_DEFAULTS.value_voting, help_text="Off: string voting (the ablation)."
    )
    max_resolve_rounds = forms.IntegerField(
        required=False, min_value=0, max_value=2, initial=_DEBATE_DEFAULTS.max_resolve_rounds
    )
    rel_tol = forms.FloatField(
        required=False, min_value=1e-9, max_value=0.5, initial=_DEBATE_DEFAULTS.rel_tol, label="Tolerance"
    )
    cropper = forms.BooleanField(required=False, initial=_FRONTEND_DEFAULTS.cropper, label="Cropper (L4)")
    sharpen = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.sharpen, label="Image sharpening (L4)"
    )
    ocr = forms.ChoiceField(
        required=False,
        choices=[("model", "Model OCR"), ("tesseract", "Local tesseract")],
        initial=_FRONTEND_DEFAULTS.ocr,
        label="Text OCR (L4)",
    )
    visual_extractor = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.visual_extractor, label="Visual extractor: SVG (L3–4)"
    )
    reconstructor = forms.BooleanField(
        required=False, initial=_FRONTEND_DEFAULTS.reconstructor, label="Problem reconstructor (L2–4)"
    )
    verify_iterations = forms.IntegerField(
        required=False, min_value=0, max_value=10, initial=_FRONTEND_DEFAULTS.verify_iterations
    )
    svg_char_cap = forms.IntegerField(
        required=False, min_value=500, max_value=100_000, initial=_FRONTEND_DEFAULTS.svg_char_cap
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in STAGE_MODEL_FIELDS:
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = _model_choices("—")

    def launch_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        # the form offers every switch but the default solver (solver 1 is it)
        settings = {key: data[key] for key in SETTING_FIELDS if key in self.fields}
        settings.update({k: v for k, v in _NUMBER_DEFAULTS.items() if settings.get(k) in (None, "")})
        return {
            "solver_names": [data[f"solver_{n}"] for n in (1, 2, 3) if data.get(f"solver_{n}")],
            "pruner": data["pruner"] or None,
            "selector": data["selector"] or None,
            "extractor": data["extractor"] or None,
            "frontend": data["frontend"] or None,
            "level": data["level"],
            "settings": settings,
            **self.parents_kwargs(),
        }


@dataclass(frozen=True)
class GradeSubmission:
    """An expert's grade as posted by the grading page: rubric rows (description, awarded, maximum, as typed;
    ``solving.grading`` checks them), the binary verdict, a note, and whether to go on to the next response."""

    components: list[dict[str, str]]
    correct: bool
    note: str
    then_next: bool

    @classmethod
    def from_rows(
        cls,
        *,
        descriptions: list[str],
        awarded: list[str],
        maxima: list[str],
        correct: str | None,
        note: str,
        then: str | None,
    ) -> GradeSubmission:
        """The page posts one ``description``/``awarded``/``maximum`` value per rubric row, in row order."""
        return cls(
            components=[
                {"description": d, "awarded": a, "maximum": m}
                for d, a, m in zip(descriptions, awarded, maxima, strict=False)
            ],
            correct=correct == "on",
            note=note,
            then_next=then == "next",
        )
