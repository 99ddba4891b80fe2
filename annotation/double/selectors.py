"""Reads for double annotation: the samples with their progress, and a second annotator's work list."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ..models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from .services import INDEPENDENT_PASSES


def sample_rows(samples: list[DoubleAnnotationSample] | None = None) -> list[dict[str, Any]]:
    """The samples (every one, newest first, by default) with their parents, submitted documents per pass and
    parents per annotator (three queries)."""
    if samples is None:
        samples = list(DoubleAnnotationSample.objects.select_related("source").order_by("-created_at", "-id"))
    ids = [sample.pk for sample in samples]
    annotators: dict[int, Counter[str]] = defaultdict(Counter)
    for sample_id, username in SecondAnnotation.objects.filter(sample_id__in=ids).values_list(
        "sample_id", "annotator__username"
    ):
        annotators[sample_id][username] += 1
    submitted: dict[int, Counter[str]] = defaultdict(Counter)
    for sample_id, pass_no in IndependentPassDocument.objects.filter(
        status=IndependentPassDocument.Status.SUBMITTED, second__sample_id__in=ids
    ).values_list("second__sample_id", "pass_no"):
        submitted[sample_id][str(pass_no)] += 1
    return [
        {
            "id": sample.pk,
            "source": sample.source.name,
            "fraction": sample.fraction,
            "count": sample.count,
            "seed": sample.seed,
            "parents": sum(annotators[sample.pk].values()),
            "submitted": {str(n): submitted[sample.pk][str(n)] for n in INDEPENDENT_PASSES},
            "annotators": dict(sorted(annotators[sample.pk].items())),
            "created_at": sample.created_at,
        }
        for sample in samples
    ]


def work_rows(user: Any, *, everyone: bool = False) -> list[dict[str, Any]]:
    """The parents ``user`` annotates a second time (every second annotation for ``everyone``: admins), each with
    the state of their own documents per pass (two queries)."""
    seconds = SecondAnnotation.objects.select_related("parent", "annotator").order_by("parent__problem_id")
    if not everyone:
        seconds = seconds.filter(annotator=user)
    rows = list(seconds)
    states: dict[int, dict[int, str]] = defaultdict(dict)
    for second_id, pass_no, state in IndependentPassDocument.objects.filter(
        second__in=[r.pk for r in rows]
    ).values_list("second_id", "pass_no", "status"):
        states[second_id][pass_no] = state
    return [
        {
            "problem_id": second.parent.problem_id,
            "annotator": second.annotator.get_username(),
            "passes": [{"pass_no": n, "status": states[second.pk].get(n, "new")} for n in INDEPENDENT_PASSES],
        }
        for second in rows
    ]
