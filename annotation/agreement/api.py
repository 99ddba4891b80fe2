"""``GET /api/agreement/``: the agreement summary as JSON (admins only), per pair of annotators and pass."""

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

from .forms import filter_form, form_errors
from .permissions import can_view_annotation_agreement
from .selectors import AgreementSummary, PairAgreement, agreement_summary

CanViewAnnotationAgreement = role_permission(can_view_annotation_agreement, name="CanViewAnnotationAgreement")


def _ratio(help_text: str = "") -> serializers.FloatField:
    return serializers.FloatField(
        allow_null=True, help_text=help_text or "null when there is nothing to divide."
    )


class MatchingOutput(serializers.Serializer):
    first = serializers.IntegerField(help_text="Records of the first annotation.")
    second = serializers.IntegerField(help_text="Records of the second annotation.")
    matched = serializers.IntegerField()
    unmatched_first = serializers.IntegerField()
    unmatched_second = serializers.IntegerField()
    mean_score = _ratio("Mean IoU / similarity of the matches; null without a match.")
    precision = _ratio("matched ÷ second.")
    recall = _ratio("matched ÷ first.")
    f1 = _ratio()


class AgreementOutput(serializers.Serializer):
    n = serializers.IntegerField(help_text="Pairs compared.")
    agree = serializers.IntegerField()
    rate = _ratio("agree ÷ n.")


class KappaOutput(serializers.Serializer):
    kappa = _ratio("Cohen's κ; null when undefined (no pair, or one category on both sides).")
    n = serializers.IntegerField(help_text="The pairs κ rests on.")
    observed = _ratio("p_o.")
    expected = _ratio("p_e.")


class CategoricalOutput(AgreementOutput):
    kappa = KappaOutput()


def _optional(serializer: type[serializers.Serializer], what: str) -> serializers.Serializer:
    return serializer(allow_null=True, help_text=f"{what}; null for a pass that does not compare it.")


class FiguresOutput(serializers.Serializer):
    regions = _optional(MatchingOutput, "Pass 1: regions")
    transcription = _optional(AgreementOutput, "Pass 1: matched text regions with the same normalized text")
    region_type = _optional(AgreementOutput, "Pass 1: matched regions of the same type")
    entities = _optional(MatchingOutput, "Pass 2: entities, matched through their regions")
    entity_type = _optional(CategoricalOutput, "Pass 2: entity type on matched entities")
    binding = _optional(AgreementOutput, "Pass 2: matched bound regions bound to matched entities")
    mentions = _optional(MatchingOutput, "Pass 3: text mentions (same span)")
    quantities = _optional(MatchingOutput, "Pass 3: quantities, matched by anchors then symbol")
    quantity_kind = _optional(CategoricalOutput, "Pass 3: kind on matched quantities")
    quantity_value = _optional(AgreementOutput, "Pass 3: value after the label normalizer")
    quantity_unit = _optional(AgreementOutput, "Pass 3: unit after the label normalizer")
    quantity_owner = _optional(AgreementOutput, "Pass 3: owner through the entity matching")


class PersonOutput(serializers.Serializer):
    id = serializers.IntegerField(help_text="0: not known (a first document nobody saved through the app).")
    username = serializers.CharField()


class PairOutput(serializers.Serializer):
    first_annotator = PersonOutput(help_text="The last saver of the first annotation's pass.")
    second_annotator = PersonOutput()
    pass_no = serializers.IntegerField()
    parents = serializers.IntegerField(help_text="Parents with both annotations of this pass.")
    submitted = serializers.IntegerField(help_text="Of them, with the second annotation submitted.")
    figures = FiguresOutput(help_text="Pooled over the parents: counts summed, rates and κ recomputed.")


class AgreementSummaryOutput(serializers.Serializer):
    sample = serializers.IntegerField(allow_null=True, help_text="The sample compared; null: every sample.")
    threshold = serializers.FloatField(help_text="The IoU threshold of a region match.")
    pairs = PairOutput(many=True)


def summary_payload(data: AgreementSummary) -> dict[str, Any]:
    """The summary as the API's JSON (also ``manage.py agreement --json``)."""
    return {"sample": data.sample_id, "threshold": data.threshold, "pairs": [_pair(p) for p in data.pairs]}


def _pair(pair: PairAgreement) -> dict[str, Any]:
    return {
        "first_annotator": {"id": pair.first.id, "username": pair.first.name},
        "second_annotator": {"id": pair.second.id, "username": pair.second.name},
        "pass_no": pair.pass_no,
        "parents": pair.parents,
        "submitted": pair.submitted,
        "figures": pair.figures,
    }


class AgreementApi(APIView):
    """Annotation agreement (admins): per pair of annotators (first, second) and pass, pooled over the parents."""

    permission_classes = [CanViewAnnotationAgreement]

    @extend_schema(
        operation_id="annotation_agreement",
        parameters=[
            OpenApiParameter(
                "sample", OpenApiTypes.INT, description="A double-annotation sample (blank: all)."
            ),
            OpenApiParameter("threshold", OpenApiTypes.FLOAT, description="Region IoU threshold, (0, 1]."),
        ],
        responses={200: AgreementSummaryOutput, **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        form = filter_form(request.query_params)
        if not form.is_valid():
            raise ApplicationError(
                form_errors(form),
                code="filter_invalid",
                extra={"fields": {name: [str(e) for e in errs] for name, errs in form.errors.items()}},
            )
        data = agreement_summary(sample_id=form.sample_id(), threshold=form.threshold_value())
        payload = {
            "sample": data.sample_id,
            "threshold": data.threshold,
            "pairs": [_pair(p) for p in data.pairs],
        }
        return Response(AgreementSummaryOutput(payload).data)
