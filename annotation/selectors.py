"""Reads of problems and pass documents, shaped so that page and API query counts stay flat."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from .models import ParentProblem, PassDocument, ProblemImage, Source


def parent_list(*, search: str = "", source: str = "", language: str = "", domain: str = "",
                status: str = "") -> QuerySet[ParentProblem]:
    qs = ParentProblem.objects.select_related("source").annotate(image_count=Count("images", distinct=True))
    if search:
        qs = qs.filter(
            Q(problem_id__icontains=search) | Q(stem__icontains=search) | Q(query__icontains=search)
            | Q(source_sample_id__icontains=search)
        )
    if source:
        qs = qs.filter(source__name=source) if not source.isdigit() else qs.filter(source_id=int(source))
    if language:
        qs = qs.filter(language=language)
    if domain:
        qs = qs.filter(domain=domain)
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("problem_id")


def parent_detail_queryset() -> QuerySet[ParentProblem]:
    return ParentProblem.objects.select_related("source").prefetch_related(
        Prefetch("images", queryset=ProblemImage.objects.order_by("ordinal")),
        Prefetch("passes", queryset=PassDocument.objects.order_by("pass_no").select_related("approved_by")),
    )


def parent_facets() -> dict[str, list[str]]:
    return {
        "sources": list(Source.objects.order_by("name").values_list("name", flat=True)),
        "domains": list(
            ParentProblem.objects.exclude(domain="").order_by("domain").values_list("domain", flat=True).distinct()
        ),
        "languages": [c[0] for c in ParentProblem.Language.choices],
        "statuses": [c[0] for c in ParentProblem.Status.choices],
    }
