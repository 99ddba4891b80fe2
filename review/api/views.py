"""REST for review: the queue, public probe, blind answer, the reveal gate, decisions, agreement, audit, signoff.
Each view validates, calls one service and answers; permissions are the same helpers the pages use."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import (
    ApiCursorPagination,
    ApiErrorOutput,
    choice_input,
    choice_string,
    cursor_page,
    errors,
    role_permission,
)
from physalign_site.errors import ApplicationError
from probes.models import Probe
from review import services
from review.models import (
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    BlindOrder,
    ReviewSlot,
    Role,
)
from review.permissions import (
    can_manage_audit,
    can_manage_kit_decisions,
    can_review,
    can_view_agreement,
    can_work_slot,
)
from review.reports import agreement_json, agreement_report
from review.selectors import (
    Gate,
    audit_campaign_list,
    blind_progress,
    my_slot_list,
    probe_outcome,
    reveal_payload,
    slot_work,
    slot_work_counts,
)
from review.services.kit_decisions_export import kit_decisions_export, kit_draft_find

from .serializers import (
    AgreementOutput,
    AssessmentOutput,
    BlindOutput,
    CampaignListedOutput,
    CampaignOutput,
    DecisionRecordedOutput,
    PlanDetailOutput,
    PlanOutput,
    ProbePublicOutput,
    QueueSlotOutput,
    RevealOutput,
    SignoffOutput,
    SlotDetailOutput,
    SlotOutput,
)

REFUSED = "You do not have permission for this."
CanReview = role_permission(can_review, message=REFUSED, name="CanReview")
CanManageAudit = role_permission(can_manage_audit, message=REFUSED, name="CanManageAudit")
CanViewAgreement = role_permission(can_view_agreement, message=REFUSED, name="CanViewAgreement")
# Only the slot's reviewer works a slot; asked once the slot is loaded, so an unknown slot stays a 404.
CanWorkSlot = role_permission(on_object=can_work_slot, message=REFUSED, name="CanWorkSlot")


def _require_gate(gate: Gate) -> None:
    if not gate.allowed:
        raise ApplicationError(gate.message, code=gate.code, status=403)


class _SlotApi(APIView):
    """A view of one slot (and one of its probes): only the slot's reviewer."""

    permission_classes = [CanWorkSlot]

    def slot(self, request: Request, slot_id: int, queryset: Any = ReviewSlot.objects) -> ReviewSlot:
        slot = get_object_or_404(queryset, pk=slot_id)
        self.check_object_permissions(request, slot)
        return slot

    def slot_probe(self, request: Request, slot_id: int, logical_probe_id: str) -> tuple[ReviewSlot, Probe]:
        slot = self.slot(request, slot_id)
        probe = get_object_or_404(
            Probe.objects.select_related("key", "parent"), logical_probe_id=logical_probe_id
        )
        if probe.logical_probe_id not in {p.logical_probe_id for p in slot_work(slot, include_done=True)}:
            raise NotFound("This probe is not part of the assignment.")
        return slot, probe


# --- the queue and slots ------------------------------------------------------------------------------


class QueueApi(APIView):
    """The reviewer's slots, newest first, in cursor pages; POST claims the next parent."""

    permission_classes = [CanReview]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema_serializer(component_name="ReviewClaimInput")
    class InputSerializer(serializers.Serializer):
        role = choice_input([Role.PRIMARY, Role.SECONDARY, Role.ADJUDICATOR])
        context = serializers.CharField(default="development")  # type: ignore[assignment]  # DRF takes declared fields off the class

    @extend_schema(
        operation_id="review_queue",
        responses={200: QueueSlotOutput(many=True), **errors(401, 403, 404)},
        description="Cursor pages, newest slot first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request):
        def render(page: list[ReviewSlot]) -> Any:
            counts = slot_work_counts(page)
            for slot in page:
                slot.total, slot.remaining = counts[slot.pk]  # type: ignore[attr-defined]  # read by the output
            return QueueSlotOutput(page, many=True).data

        return cursor_page(self, request, my_slot_list(request.user), render)

    @extend_schema(
        operation_id="review_claim",
        request=InputSerializer,
        responses={201: SlotOutput, **errors(400, 401, 403, 404)},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        slot = services.review_claim(reviewer=request.user, **data.validated_data)
        return Response(SlotOutput(slot).data, status=201)


class SlotApi(_SlotApi):
    @extend_schema(operation_id="review_slot", responses={200: SlotDetailOutput, **errors(401, 403, 404)})
    def get(self, request, slot_id: int):
        slot = self.slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
        return Response(SlotDetailOutput(slot, context={"progress": blind_progress(slot)}).data)


class SlotReleaseApi(_SlotApi):
    @extend_schema(
        operation_id="review_slot_release",
        request=None,
        responses={200: SlotOutput, **errors(401, 403, 404, 409)},
    )
    def post(self, request, slot_id: int):
        slot = self.slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
        return Response(SlotOutput(services.review_release(slot=slot, reviewer=request.user)).data)


class BlindOrderApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema_serializer(component_name="ReviewBlindOrderInput")
    class InputSerializer(serializers.Serializer):
        context = serializers.CharField(max_length=40)  # type: ignore[assignment]  # DRF takes declared fields off the class
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    @extend_schema_serializer(component_name="ReviewBlindOrder")
    class OutputSerializer(serializers.Serializer):
        context = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    @extend_schema(
        operation_id="review_blind_order_set",
        request=InputSerializer,
        responses={200: OutputSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        setting = services.review_context_set_blind_order(
            context=data.validated_data["context"],
            order=data.validated_data["blind_order"],
            actor=request.user,
        )
        return Response(self.OutputSerializer(setting).data)


# --- one probe: public side, blind answer, the reveal, the decision -----------------------------------


class ProbePublicApi(_SlotApi):
    @extend_schema(
        operation_id="review_probe_public", responses={200: ProbePublicOutput, **errors(401, 403, 404)}
    )
    def get(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = self.slot_probe(request, slot_id, logical_probe_id)
        return Response(ProbePublicOutput(probe, context={"progress": blind_progress(slot)}).data)


class BlindApi(_SlotApi):
    @extend_schema_serializer(component_name="ReviewBlindAnswerInput")
    class InputSerializer(serializers.Serializer):
        binding = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        read = serializers.DictField(
            child=serializers.CharField(allow_blank=True), required=False, default=dict
        )
        cannot_answer = serializers.BooleanField(required=False, default=False)
        reason = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="review_blind_submit",
        request=InputSerializer,
        responses={201: BlindOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = self.slot_probe(request, slot_id, logical_probe_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        blind = services.review_submit_blind(
            slot=slot, probe=probe, reviewer=request.user, given=services.BlindAnswerIn(**data.validated_data)
        )
        return Response(BlindOutput(blind).data, status=201)


class TargetApi(_SlotApi):
    @extend_schema(
        operation_id="review_target_reveal", responses={200: RevealOutput, **errors(401, 403, 404)}
    )
    def get(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = self.slot_probe(request, slot_id, logical_probe_id)
        _require_gate(blind_progress(slot).reveal_gate(probe))
        return Response(RevealOutput(reveal_payload(slot, probe)).data)


class DecisionApi(_SlotApi):
    @extend_schema_serializer(component_name="ReviewDecisionInput")
    class InputSerializer(serializers.Serializer):
        status = choice_input(["approved", "rejected"], as_pattern=True)
        severity = serializers.CharField()
        confirmations = serializers.DictField(child=serializers.BooleanField())
        packet_state = serializers.CharField()
        packet_empty_reason = serializers.CharField(required=False, allow_blank=True, default="")
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="review_decide",
        request=InputSerializer,
        responses={201: DecisionRecordedOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = self.slot_probe(request, slot_id, logical_probe_id)
        _require_gate(blind_progress(slot).reveal_gate(probe))
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.review_decide(
            slot=slot, probe=probe, reviewer=request.user, given=services.DecisionIn(**data.validated_data)
        )
        probe.refresh_from_db()
        # read by DecisionRecordedOutput: view-set attributes, not model fields
        decision.probe_state = probe.state  # type: ignore[attr-defined]
        decision.outcome = probe_outcome(probe, slot.context).state  # type: ignore[attr-defined]
        return Response(DecisionRecordedOutput(decision).data, status=201)


# --- agreement, audit, signoff ------------------------------------------------------------------------


class AgreementApi(APIView):
    permission_classes = [CanViewAgreement]

    class FilterSerializer(serializers.Serializer):
        context = serializers.CharField(  # type: ignore[assignment]  # DRF takes declared fields off the class
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="development",
            help_text="development (default) or audit:<plan id>",
        )

    @extend_schema(
        operation_id="review_agreement",
        # a NUL or lone surrogate in ?context= is refused (400) before any view, by the middleware
        responses={200: AgreementOutput, **errors(401, 403)},
        parameters=[FilterSerializer],
    )
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return Response(AgreementOutput(agreement_json(agreement_report(**filters.validated_data))).data)


class CampaignListApi(APIView):
    """Audit campaigns, newest first, in cursor pages; POST opens one."""

    permission_classes = [CanManageAudit]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema(
        operation_id="review_campaigns",
        responses={200: CampaignListedOutput(many=True), **errors(401, 403, 404)},
        description="Cursor pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request):
        return cursor_page(
            self, request, audit_campaign_list(), lambda page: CampaignListedOutput(page, many=True).data
        )

    @extend_schema(
        operation_id="review_campaign_create",
        request=None,
        responses={201: CampaignOutput, **errors(401, 403)},
    )
    def post(self, request):
        campaign = services.audit_campaign_create(actor=request.user)
        return Response(CampaignOutput(campaign).data, status=201)


class PlanCreateApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(
        operation_id="review_plan_create",
        request=None,
        responses={201: PlanOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, campaign_pk: int):
        campaign = get_object_or_404(AuditCampaign, pk=campaign_pk)
        return Response(
            PlanOutput(services.audit_plan_create(campaign=campaign, actor=request.user)).data, status=201
        )


class PlanApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(operation_id="review_plan", responses={200: PlanDetailOutput, **errors(401, 403, 404)})
    def get(self, request, plan_pk: int):
        return Response(PlanDetailOutput(get_object_or_404(AuditPlan, pk=plan_pk)).data)


class AssessApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(
        operation_id="review_plan_assess",
        request=None,
        responses={201: AssessmentOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, plan_pk: int):
        plan = get_object_or_404(AuditPlan, pk=plan_pk)
        assessment = services.audit_assess(plan=plan, actor=request.user)
        return Response(AssessmentOutput(assessment).data, status=201)


class SignoffApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema_serializer(component_name="ReviewSignoffInput")
    class InputSerializer(serializers.Serializer):
        mode = choice_input(["audit", "individual"])
        assessment = serializers.IntegerField(required=False, allow_null=True, default=None)
        confirmations = serializers.DictField(child=serializers.BooleanField())
        evidence_ref = serializers.CharField()

    @extend_schema(
        operation_id="review_signoff_create",
        request=InputSerializer,
        responses={201: SignoffOutput, **errors(400, 401, 403, 409)},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        assessment = (
            AuditAssessment.objects.filter(pk=values["assessment"]).first() if values["assessment"] else None
        )
        signoff = services.signoff_create(
            actor=request.user,
            mode=values["mode"],
            assessment=assessment,
            confirmations=values["confirmations"],
            evidence_ref=values["evidence_ref"],
        )
        return Response(SignoffOutput(signoff).data, status=201)


# --- Kit review decisions -----------------------------------------------------------------------------

CanManageKitDecisions = role_permission(
    can_manage_kit_decisions, message=REFUSED, name="CanManageKitDecisions"
)


@extend_schema_serializer(component_name="KitDecisionConfirmations")
class KitConfirmationsOutput(serializers.Serializer):
    """The six confirmations of a Kit decision (Kit §6.2), each a boolean."""

    source_semantics = serializers.BooleanField()
    complete_targets = serializers.BooleanField()
    distinct_candidates = serializers.BooleanField()
    rendered_locations = serializers.BooleanField()
    packet_no_binding_leakage = serializers.BooleanField()
    diagram_asset_scope = serializers.BooleanField()


@extend_schema_serializer(component_name="KitDecisionRecord")
class KitDecisionOutput(serializers.Serializer):
    logical_probe_id = serializers.CharField()
    review_target_root = serializers.CharField(help_text="The Kit's review target root of the bound probe")
    status = choice_string([(s, s) for s in ("approved", "rejected", "pending")])
    reviewer = serializers.CharField(help_text="Our reviewer's username, as text; empty while pending")
    blind_answer = serializers.CharField(help_text="The reviewer's blind answer as the Kit's free text")
    confirmations = KitConfirmationsOutput()
    note = serializers.CharField()


@extend_schema_serializer(component_name="KitDecisionsFile")
class KitDecisionsFileOutput(serializers.Serializer):
    """A ``physalign_decisions_v1`` file (Kit §6.2)."""

    schema_version = serializers.ChoiceField(["physalign_decisions_v1"])
    catalog_root = serializers.CharField()
    decisions = KitDecisionOutput(many=True)


class KitDecisionsExportApi(APIView):
    """Our decisions on the probes an imported Kit draft binds, as a ``physalign_decisions_v1`` file (Kit §6.2)
    on the Kit's roots: key holders only (blind answers next to decisions on private targets)."""

    permission_classes = [CanManageKitDecisions]

    @extend_schema(
        operation_id="review_kit_decisions_export",
        responses={
            (200, "application/json"): OpenApiResponse(
                KitDecisionsFileOutput,
                description="The decision file: canonical JSON and a newline, as a download. Decided probes "
                "carry their decision of record here, the others are pending; bindings stale since the "
                "draft was checked and probes settled only by a Kit file are left out.",
            ),
            **errors(400, 401, 403),
            404: OpenApiResponse(ApiErrorOutput, description="No imported Kit draft has this catalog root."),
            409: OpenApiResponse(
                ApiErrorOutput, description="The file would break the Kit's rules (never written)."
            ),
        },
        description="`catalog_root`: the draft's catalog root, or a prefix of it (4 to 64 hex digits; "
        "400 `KIT_DRAFT_AMBIGUOUS` when several drafts start with it).",
    )
    def get(self, request, catalog_root: str):
        result = kit_decisions_export(draft=kit_draft_find(catalog_root=catalog_root), actor=request.user)
        response = HttpResponse(result.data, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="{result.filename}"'
        return response
