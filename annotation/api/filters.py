"""django-filter FilterSets for the annotation API (query-string filters, one per field)."""

from __future__ import annotations

import django_filters

from ..models import ParentProblem


class ParentFilter(django_filters.FilterSet):
    source = django_filters.CharFilter(field_name="source__name", help_text="Source name (exact).")
    language = django_filters.ChoiceFilter(choices=ParentProblem.Language.choices)
    domain = django_filters.CharFilter(field_name="domain")
    status = django_filters.ChoiceFilter(choices=ParentProblem.Status.choices)

    class Meta:
        model = ParentProblem
        fields = ["source", "language", "domain", "status"]
