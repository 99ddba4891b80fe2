"""``/api/parents/<problem_id>/passes/<pass_no>/curation/``: GET both annotations of a pass and their record pairs
(each with its allowed choices and default); POST the choices (If-Match: the first document's version) to save the
curated document as a new version of the first annotator's pass and submit it for source review when it validates.
Admins and source reviewers only; never the parent's second annotator, nor the first document's last editor."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.utils.http import quote_etag
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import choice_string, errors, json_object, role_permission

from ..api.views import IF_MATCH, PASS_PATH_PARAMS, expected_version
from .merge import KEEPS, Choice
from .permissions import can_curate
from .selectors import CurationSides, curation_list, curation_parent, curation_rows, curation_sides
from .services import curation_apply

CanCurate = role_permission(can_curate, name="CanCurate")


class CurationSideOutput(serializers.Serializer):
    version = serializers.IntegerField(help_text="The save counter (the first's is the If-Match of a POST).")
    document_sha256 = serializers.CharField()
    status = serializers.CharField()
    annotator = serializers.CharField(
        help_text="The first: its last editor; the second: the second annotator."
    )
    document = json_object("The Kit pass document of this side.")


class CurationPairOutput(serializers.Serializer):
    index = serializers.IntegerField(help_text="The pair's row (the pairs' order).")
    collection = serializers.CharField()
    noun = serializers.CharField(help_text="What the collection's records are called: region, entity, …")
    first_id = serializers.CharField(allow_null=True, help_text="null: only in the second document.")
    second_id = serializers.CharField(allow_null=True, help_text="null: only in the first document.")
    score = serializers.FloatField(help_text="The match's similarity (IoU for boxes); 0 when unmatched.")
    kind = choice_string([(k, k) for k in ("matched", "first_only", "second_only")])
    allowed = serializers.ListField(
        child=choice_string([(k, k) for k in KEEPS]), help_text="The keeps this pair takes."
    )
    default = choice_string([(k, k) for k in KEEPS])
    first_label = serializers.CharField()
    second_label = serializers.CharField()
    first_regions = serializers.ListField(child=serializers.CharField())
    second_regions = serializers.ListField(child=serializers.CharField())
    differs = serializers.ListField(
        child=serializers.CharField(), help_text="Matched: the fields in which the second's record differs."
    )


class CurationSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    curator = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    first_sha256 = serializers.CharField()
    second_sha256 = serializers.CharField()
    result_sha256 = serializers.CharField()


class CurationOutput(serializers.Serializer):
    problem_id = serializers.CharField()
    pass_no = serializers.IntegerField()
    first = CurationSideOutput()
    second = CurationSideOutput()
    pairs = CurationPairOutput(many=True)
    curations = CurationSummaryOutput(many=True, help_text="This pass's curations, newest first.")


class CurationUnresolvedOutput(serializers.Serializer):
    collection = serializers.CharField()
    record_id = serializers.CharField()
    field = serializers.CharField()
    missing = serializers.CharField()
    side = serializers.CharField()


class CurationIssueOutput(serializers.Serializer):
    code = serializers.CharField()
    path = serializers.CharField()
    message = serializers.CharField()


class CurationAppliedOutput(serializers.Serializer):
    curation_id = serializers.IntegerField()
    version = serializers.IntegerField(
        help_text="The first annotator's pass document's version now (its ETag)."
    )
    status = serializers.CharField(
        help_text="submitted (sent to source review), draft (it has issues) or approved."
    )
    submitted = serializers.BooleanField()
    document_sha256 = serializers.CharField()
    issues = CurationIssueOutput(many=True, help_text="Why it stayed a draft (the validator's issues).")
    taken = serializers.ListField(child=serializers.CharField())
    added = serializers.DictField(child=serializers.CharField(), help_text="second id → curated id")
    dropped = serializers.ListField(child=serializers.CharField())
    renamed = serializers.DictField(child=serializers.CharField(), help_text="id before → after renumbering")
    unresolved = CurationUnresolvedOutput(many=True)


@extend_schema_serializer(component_name="CurationChoiceInput")
class ChoiceInput(serializers.Serializer):
    collection = serializers.CharField(max_length=100)
    first_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    second_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    keep = serializers.ChoiceField(
        choices=list(KEEPS),
        help_text="matched pair: first | second; first-only: first | drop; second-only: second (add) | drop.",
    )


def _side(doc: Any, annotator: str) -> dict[str, Any]:
    return {
        "version": doc.version,
        "document_sha256": doc.document_sha256,
        "status": doc.status,
        "annotator": annotator,
        "document": doc.document,
    }


def _payload(sides: CurationSides) -> dict[str, Any]:
    first = sides.first
    return {
        "problem_id": sides.parent.problem_id,
        "pass_no": sides.pass_no,
        "first": _side(first, first.updated_by.get_username() if first.updated_by else ""),
        "second": _side(sides.second, sides.second_annotation.annotator.get_username()),
        "pairs": [asdict(row) for row in curation_rows(sides)],
        "curations": [
            {
                "id": c.pk,
                "curator": c.curator.get_username() if c.curator else None,
                "created_at": c.created_at,
                "first_sha256": c.first_sha256,
                "second_sha256": c.second_sha256,
                "result_sha256": c.result_sha256,
            }
            for c in curation_list(parent=sides.parent, pass_no=sides.pass_no)
        ],
    }


class CurationApi(APIView):
    permission_classes = [CanCurate]

    @extend_schema_serializer(component_name="CurationApplyInput")
    class InputSerializer(serializers.Serializer):
        choices = serializers.ListField(
            child=ChoiceInput(), max_length=5000, help_text="Pairs left out take their default."
        )
        second_version = serializers.IntegerField(
            required=False,
            allow_null=True,
            default=None,
            min_value=1,
            help_text="The second document's version you saw; a newer one is a 409.",
        )

    @extend_schema(
        operation_id="curation_retrieve",
        parameters=PASS_PATH_PARAMS,
        responses={200: CurationOutput, **errors(401, 403, 404)},
        description="ETag: the first document's version (send it as If-Match to POST).",
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        sides = curation_sides(
            user=request.user, parent=curation_parent(problem_id=problem_id), pass_no=pass_no
        )
        return Response(
            CurationOutput(_payload(sides)).data, headers={"ETag": quote_etag(str(sides.first.version))}
        )

    @extend_schema(
        operation_id="curation_apply",
        parameters=[*PASS_PATH_PARAMS, IF_MATCH],
        request=InputSerializer,
        responses={200: CurationAppliedOutput, **errors(400, 401, 403, 404, 409, 428)},
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        parent = curation_parent(problem_id=problem_id)
        expected = expected_version(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = curation_apply(
            parent=parent,
            pass_no=pass_no,
            choices=[Choice(**row) for row in data.validated_data["choices"]],
            curator=request.user,
            expected_version=expected,
            second_version=data.validated_data["second_version"],
        )
        result = outcome.result
        body = {
            "curation_id": outcome.curation.pk,
            "version": outcome.doc.version,
            "status": outcome.doc.status,
            "submitted": outcome.submitted,
            "document_sha256": outcome.doc.document_sha256,
            "issues": [
                {"code": i.get("code", ""), "path": i.get("path", ""), "message": i.get("message", "")}
                for i in outcome.issues
            ],
            "taken": list(result.taken),
            "added": result.added,
            "dropped": list(result.dropped),
            "renamed": result.renamed,
            "unresolved": [asdict(u) for u in result.unresolved],
        }
        return Response(
            CurationAppliedOutput(body).data, headers={"ETag": quote_etag(str(outcome.doc.version))}
        )
