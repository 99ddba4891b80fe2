"""The second annotator's own pass documents over the API (the workspace saves through it, with If-Match as the
first annotator's), and the admins' double-annotation samples."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import ApiCursorPagination, cursor_page, errors, json_object, role_permission
from physalign_site.errors import ApplicationError

from ..api.serializers import ValidationIssueOutput
from ..api.views import IF_MATCH, expected_version
from ..models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation, Source
from .permissions import can_annotate_independently, can_manage_double_annotation
from .selectors import sample_rows
from .services import (
    double_sample_request,
    independent_issues,
    independent_save,
    independent_submit,
    second_for,
)

CanAnnotateIndependently = role_permission(can_annotate_independently, name="CanAnnotateIndependently")
CanManageDoubleAnnotation = role_permission(can_manage_double_annotation, name="CanManageDoubleAnnotation")
PATH = [
    OpenApiParameter("problem_id", OpenApiTypes.STR, OpenApiParameter.PATH),
    OpenApiParameter("pass_no", OpenApiTypes.INT, OpenApiParameter.PATH, enum=[1, 2, 3]),
]


class IndependentStateOutput(serializers.Serializer):
    problem_id = serializers.CharField(source="second.parent.problem_id")
    pass_no = serializers.IntegerField()
    status = serializers.CharField(help_text="draft, or submitted (marked done: read-only in the workspace)")
    version = serializers.IntegerField(help_text="the save counter: send it as If-Match (it is the ETag)")
    history_version = serializers.IntegerField(help_text="the same as version (no coalescing history here)")
    document = json_object("The second annotator's Kit pass document of this pass.")
    document_sha256 = serializers.CharField()
    updated_by = serializers.SerializerMethodField()
    updated_at = serializers.DateTimeField()
    validation_errors = serializers.SerializerMethodField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_updated_by(self, doc: IndependentPassDocument) -> str | None:
        return doc.updated_by.get_username() if doc.updated_by is not None else None

    @extend_schema_field(ValidationIssueOutput(many=True))
    def get_validation_errors(self, doc: IndependentPassDocument) -> list[dict[str, Any]]:
        return list(self.context.get("issues", []))


def _state(doc: IndependentPassDocument, second: SecondAnnotation) -> Response:
    issues = independent_issues(second, doc.pass_no, doc.document)
    data = IndependentStateOutput(doc, context={"issues": issues}).data
    return Response(data, headers={"ETag": quote_etag(str(doc.version))})


def _document(second: SecondAnnotation, pass_no: int) -> IndependentPassDocument:
    doc = second.documents.filter(pass_no=pass_no).select_related("updated_by").first()
    if doc is None:
        raise ApplicationError(
            "This pass has no independent document yet.", code="pass_not_found", status=404
        )
    return doc


class IndependentPassApi(APIView):
    permission_classes = [CanAnnotateIndependently]

    @extend_schema_serializer(component_name="IndependentPassUpdateInput")
    class InputSerializer(serializers.Serializer):
        document = json_object("The whole Kit pass document of this pass (Passes 1–3).")

    @extend_schema(
        operation_id="independent_passes_retrieve",
        parameters=PATH,
        responses={200: IndependentStateOutput, **errors(401, 403, 404)},
        description="The second annotator's own document of one pass (they and admins only).",
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        second = second_for(problem_id=problem_id, user=request.user)
        return _state(_document(second, pass_no), second)

    @extend_schema(
        operation_id="independent_passes_update",
        parameters=[*PATH, IF_MATCH],
        request=InputSerializer,
        responses={200: IndependentStateOutput, **errors(400, 401, 403, 404, 409, 428)},
        description="Save the second annotator's document (If-Match the version loaded; 0 or none to create).",
    )
    def put(self, request: Request, problem_id: str, pass_no: int) -> Response:
        second = second_for(problem_id=problem_id, user=request.user)
        expected = expected_version(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = independent_save(
            second=second,
            pass_no=pass_no,
            document=data.validated_data["document"],
            actor=request.user,
            expected_version=expected,
        )
        return _state(doc, second)


class IndependentPassSubmitApi(APIView):
    permission_classes = [CanAnnotateIndependently]

    @extend_schema(
        operation_id="independent_passes_submit",
        parameters=PATH,
        request=None,
        responses={200: IndependentStateOutput, **errors(400, 401, 403, 404)},
        description="Mark the second annotator's document of this pass done (only when it validates).",
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        second = second_for(problem_id=problem_id, user=request.user)
        return _state(independent_submit(second=second, pass_no=pass_no, actor=request.user), second)


class SampleOutput(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
    fraction = serializers.FloatField(allow_null=True)
    count = serializers.IntegerField(allow_null=True)
    seed = serializers.IntegerField()
    parents = serializers.IntegerField(help_text="parents in the sample")
    submitted = serializers.DictField(
        child=serializers.IntegerField(), help_text="submitted documents per pass"
    )
    annotators = serializers.DictField(
        child=serializers.IntegerField(), help_text="parents per second annotator"
    )
    created_at = serializers.DateTimeField()


class SampleListApi(APIView):
    permission_classes = [CanManageDoubleAnnotation]
    pagination_class = ApiCursorPagination
    ordering = ("-created_at", "-id")

    @extend_schema_serializer(component_name="DoubleAnnotationSampleInput")
    class InputSerializer(serializers.Serializer):
        source = serializers.CharField(help_text="the source's name")  # type: ignore[assignment]  # (as above)
        fraction = serializers.FloatField(required=False, allow_null=True, min_value=0.0, max_value=1.0)
        count = serializers.IntegerField(required=False, allow_null=True, min_value=1)
        seed = serializers.IntegerField(required=False, default=2027)
        annotators = serializers.ListField(
            child=serializers.CharField(), allow_empty=False, help_text="usernames of the second annotators"
        )

    @extend_schema(
        operation_id="double_annotation_samples_list",
        responses={200: SampleOutput(many=True), **errors(401, 403, 404)},
        description="Every double-annotation sample with its progress (admins), newest first, in cursor pages "
        "(`?cursor=`, `?page_size=`). 404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        return cursor_page(
            self,
            request,
            DoubleAnnotationSample.objects.select_related("source"),
            lambda page: SampleOutput(sample_rows(page), many=True).data,
        )

    @extend_schema(
        operation_id="double_annotation_samples_create",
        request=InputSerializer,
        responses={201: SampleOutput, **errors(400, 401, 403, 404, 409)},
        description="Draw a seeded sample of a source's parents (a fraction or a count) and give each a second, "
        "independent annotator, spread evenly over the annotators named.",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        source = Source.objects.filter(name=values["source"]).first()
        if source is None:
            raise ApplicationError("No such source.", code="source_not_found", status=404)
        names = list(dict.fromkeys(values["annotators"]))
        ids = dict(get_user_model().objects.filter(username__in=names).values_list("username", "pk"))
        unknown = [name for name in names if name not in ids]
        if unknown:
            raise ApplicationError(
                "Unknown annotator.", code="annotator_unknown", extra={"usernames": unknown}
            )
        sample = double_sample_request(
            source=source,
            annotator_ids=[ids[name] for name in names],
            actor=request.user,
            fraction=values.get("fraction"),
            count=values.get("count"),
            seed=values["seed"],
        )
        (row,) = sample_rows([sample])
        return Response(SampleOutput(row).data, status=status.HTTP_201_CREATED)
