"""What the solve and debate launch forms offer: the models that can solve a problem (not the probe
baseline, which only answers probe prompts) and the problem sources a run can take all parents from."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from annotation.models import ParentProblem, Source
from models_registry.models import ModelConfig

# Providers that cannot solve an original problem: the OCR + nearest-region baseline answers probe prompts only.
NOT_SOLVERS = (ModelConfig.Provider.BASELINE_OCR_NEAREST,)


def solver_models() -> QuerySet[ModelConfig]:
    return ModelConfig.objects.filter(is_active=True).exclude(provider__in=NOT_SOLVERS).order_by("name")


def problem_sources() -> QuerySet[Source]:
    """Sources with at least one parent problem, each annotated with ``parent_count``."""
    return Source.objects.annotate(parent_count=Count("problems")).filter(parent_count__gt=0).order_by("name")


def source_label(source: Source) -> str:
    count = getattr(source, "parent_count", None)
    return (
        f"{source.name} ({count} parent problem{'s' if count != 1 else ''})"
        if count is not None
        else source.name
    )


def source_parent_ids(source: Source) -> list[str]:
    return list(
        ParentProblem.objects.filter(source=source)
        .order_by("problem_id")
        .values_list("problem_id", flat=True)
    )
