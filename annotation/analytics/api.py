"""``GET /api/annotation-analytics/``: the analytics page's figures as JSON (admins only), over the same period."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import errors, role_permission
from physalign_site.errors import ApplicationError

from .figures import ACTIVE_TIME_RULE, FIGURE_COLUMNS, RATE_FIELDS, Tally, figure_values
from .forms import period_form
from .permissions import can_view_annotation_analytics
from .selectors import AnnotationAnalytics, annotation_analytics

CanViewAnnotationAnalytics = role_permission(can_view_annotation_analytics, name="CanViewAnnotationAnalytics")


def _figure_field(key: str) -> serializers.Field:
    if key in RATE_FIELDS:
        return serializers.FloatField(
            allow_null=True, help_text="A ratio; null when there is nothing to divide."
        )
    if key == "active_seconds":
        return serializers.IntegerField(help_text=ACTIVE_TIME_RULE)
    return serializers.IntegerField()


FiguresOutput = type(
    "AnnotationFiguresOutput",
    (serializers.Serializer,),
    {
        "__doc__": "One group's figures (the page's columns; rates are ratios in [0, 1], findings per checked document).",
        **{key: _figure_field(key) for key, _, _ in FIGURE_COLUMNS},
    },
)


class AnnotatorFiguresOutput(serializers.Serializer):
    username = serializers.CharField(help_text='"(unknown)" for a rejection whose submitter is not known.')
    pass_no = serializers.IntegerField(allow_null=True, help_text="null in the per-annotator totals.")
    figures = FiguresOutput()


class GroupFiguresOutput(serializers.Serializer):
    name = serializers.CharField()
    figures = FiguresOutput()


class RejectionOutput(serializers.Serializer):
    rejected_at = serializers.DateTimeField()
    problem_id = serializers.CharField()
    pass_no = serializers.IntegerField()
    source = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field.source
    domain = serializers.CharField()
    annotator = serializers.CharField()
    reviewer = serializers.CharField()
    note = serializers.CharField()
    comments = serializers.ListField(child=serializers.CharField(), help_text='"collection:id: text" each.')


class PeriodOutput(serializers.Serializer):
    first_day = serializers.DateField(allow_null=True, help_text="Included; null: from the beginning.")
    last_day = serializers.DateField(allow_null=True, help_text="Included; null: up to now.")


class AnnotationAnalyticsOutput(serializers.Serializer):
    period = PeriodOutput()
    active_time_rule = serializers.CharField()
    annotators = AnnotatorFiguresOutput(many=True, help_text="Per annotator and pass.")
    annotator_totals = AnnotatorFiguresOutput(many=True, help_text="Per annotator, every pass together.")
    sources = GroupFiguresOutput(many=True)
    domains = GroupFiguresOutput(many=True)
    total = FiguresOutput()
    rejections = RejectionOutput(many=True, help_text="Newest first.")


def _figures(tally: Tally) -> dict[str, Any]:
    return dict(zip((key for key, _, _ in FIGURE_COLUMNS), figure_values(tally), strict=True))


def _payload(data: AnnotationAnalytics) -> dict[str, Any]:
    return {
        "period": {"first_day": data.period.first_day, "last_day": data.period.last_day},
        "active_time_rule": ACTIVE_TIME_RULE,
        "annotators": [
            {"username": r.username, "pass_no": r.pass_no, "figures": _figures(r.tally)}
            for r in data.annotators
        ],
        "annotator_totals": [
            {"username": g.name, "pass_no": None, "figures": _figures(g.tally)} for g in data.annotator_totals
        ],
        "sources": [{"name": g.name, "figures": _figures(g.tally)} for g in data.sources],
        "domains": [{"name": g.name, "figures": _figures(g.tally)} for g in data.domains],
        "total": _figures(data.total),
        "rejections": [
            {
                "rejected_at": r.at,
                "problem_id": r.problem_id,
                "pass_no": r.pass_no,
                "source": r.source,
                "domain": r.domain,
                "annotator": r.annotator,
                "reviewer": r.reviewer,
                "note": r.note,
                "comments": r.comments,
            }
            for r in data.rejections
        ],
    }


class AnnotationAnalyticsApi(APIView):
    """Annotation analytics (admins): per annotator and pass, per source, per domain, and the rejections."""

    permission_classes = [CanViewAnnotationAnalytics]

    @extend_schema(
        operation_id="annotation_analytics",
        parameters=[
            OpenApiParameter("from", OpenApiTypes.DATE, description="First day, included (blank: open)."),
            OpenApiParameter("to", OpenApiTypes.DATE, description="Last day, included (blank: open)."),
        ],
        description="Without `from` and `to`: the last 30 days, today included; `?from=&to=`: all time.",
        responses={200: AnnotationAnalyticsOutput, **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        form = period_form(request.query_params)
        if not form.is_valid():
            raise ApplicationError(
                " ".join(str(e) for errs in form.errors.values() for e in errs),
                code="period_invalid",
                extra={
                    "fields": {
                        "period" if name == "__all__" else form.add_prefix(name): [str(e) for e in errs]
                        for name, errs in form.errors.items()
                    }
                },
            )
        data = annotation_analytics(period=form.period())
        return Response(AnnotationAnalyticsOutput(_payload(data)).data)
