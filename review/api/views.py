"""REST for review: the queue, public probe, blind answer, the reveal gate, decisions, agreement, audit, signoff.
Each view validates, calls one service and answers; permissions are the same helpers the pages use."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import (
    ApiErrorOutput,
    choice_input,
    choice_string,
    json_list,
    json_object,
    json_value,
    number,
    role_permission,
)
from physalign_site.errors import ApplicationError
from probes.models import Probe
from review import services
from review.models import (
    SIGNOFF_KEYS,
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    BlindOrder,
    ReviewSlot,
    Role,
)
from review.permissions import can_manage_audit, can_review, can_view_agreement, can_work_slot
from review.reports import agreement_json, agreement_report
from review.selectors import Gate, blind_progress, my_slots, reveal_payload, slot_rows, slot_work

REFUSED = "You do not have permission for this."
CanReview = role_permission(can_review, message=REFUSED, name="CanReview")
CanManageAudit = role_permission(can_manage_audit, message=REFUSED, name="CanManageAudit")
CanViewAgreement = role_permission(can_view_agreement, message=REFUSED, name="CanViewAgreement")
# Only the slot's reviewer works a slot; asked once the slot is loaded, so an unknown slot stays a 404.
CanWorkSlot = role_permission(on_object=can_work_slot, message=REFUSED, name="CanWorkSlot")

MESSAGES = {
    "type": "object",
    "description": "The chat messages a model receives (Kit §4).",
    "properties": {"system": {"type": "string"}, "user": {"type": "string"}},
}
STRINGS = {"type": "string"}
STRING_LIST = {"type": "array", "items": STRINGS}


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


# --- output shapes ------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="ReviewGate")
class GateOutput(serializers.Serializer):
    """Whether a step is open now; when not, a stable ``code`` and a sentence for the reviewer."""

    allowed = serializers.BooleanField()
    code = serializers.CharField()
    message = serializers.CharField()


@extend_schema_serializer(component_name="ReviewSlot")
class SlotOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    problem_id = serializers.CharField(source="parent.problem_id")
    role = choice_string(Role.choices)
    context = serializers.CharField(help_text="development, or audit:<plan id>")
    blind_first_probe_id = serializers.CharField()


@extend_schema_serializer(component_name="ReviewQueueSlot")
class QueueSlotOutput(SlotOutput):
    total = serializers.IntegerField(help_text="Probes of the slot")
    remaining = serializers.IntegerField(
        help_text="Probes still lacking this slot's decision on the current root"
    )


class _Gates:
    """``get_answer`` / ``get_reveal``: the gates of one probe, from the ``progress`` (``BlindProgress``) in the
    context. The serializer declares the ``answer`` and ``reveal`` method fields where they belong in its output."""

    context: dict[str, Any]

    def _probe(self, obj: Any) -> Probe:
        return obj

    @extend_schema_field(GateOutput)
    def get_answer(self, obj: Any) -> dict[str, Any]:
        return GateOutput(self.context["progress"].answer_gate(self._probe(obj))).data

    @extend_schema_field(GateOutput)
    def get_reveal(self, obj: Any) -> dict[str, Any]:
        return GateOutput(self.context["progress"].reveal_gate(self._probe(obj))).data


@extend_schema_serializer(component_name="ReviewSlotProbe")
class SlotProbeOutput(_Gates, serializers.Serializer):
    """One row of the slot's work (a ``WorkRow``)."""

    logical_probe_id = serializers.CharField(source="probe.logical_probe_id")
    interface = serializers.CharField(source="probe.interface")
    blind_answered = serializers.SerializerMethodField()
    decided = serializers.SerializerMethodField()
    stale_decisions = serializers.IntegerField(help_text="Decisions of this slot bound to an older root")
    blind_first = serializers.BooleanField()
    answer = serializers.SerializerMethodField()
    reveal = serializers.SerializerMethodField()

    def _probe(self, obj: Any) -> Probe:
        return obj.probe

    def get_blind_answered(self, row: Any) -> bool:
        return row.blind is not None

    def get_decided(self, row: Any) -> bool:
        return row.decision is not None


@extend_schema_serializer(component_name="ReviewSlotDetail")
class SlotDetailOutput(SlotOutput):
    blind_order = serializers.SerializerMethodField()
    probes = serializers.SerializerMethodField()

    @extend_schema_field(choice_string(BlindOrder.choices))
    def get_blind_order(self, slot: ReviewSlot) -> str:
        return self.context["progress"].order

    @extend_schema_field(SlotProbeOutput(many=True))
    def get_probes(self, slot: ReviewSlot) -> list[dict[str, Any]]:
        return SlotProbeOutput(slot_rows(slot), many=True, context=self.context).data


@extend_schema_serializer(component_name="ReviewPublicProbe")
class ProbePublicOutput(_Gates, serializers.Serializer):
    """Exactly what a model sees of the probe, the public answer contract, and where the reviewer stands."""

    logical_probe_id = serializers.CharField()
    interface = serializers.CharField()
    messages = json_value(MESSAGES, source="raw_messages")
    attachment_ids = json_list(STRINGS)
    contract = serializers.SerializerMethodField()
    blind_answered = serializers.SerializerMethodField()
    answer = serializers.SerializerMethodField()
    reveal = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "object",
            "additionalProperties": {},
            "description": "The answer contract: "
            "binding_key, cardinality, read_shape, read_anchor_ids, and the public candidate aliases.",
            "properties": {
                "binding_key": STRINGS,
                "cardinality": STRINGS,
                "read_shape": STRINGS,
                "read_anchor_ids": STRING_LIST,
                "aliases": STRING_LIST,
            },
        }
    )
    def get_contract(self, probe: Probe) -> dict[str, Any]:
        return services.contract_of(probe)

    def get_blind_answered(self, probe: Probe) -> bool:
        return probe.pk in self.context["progress"].answered


@extend_schema_serializer(component_name="ReviewBlindAnswer")
class BlindOutput(serializers.Serializer):
    sequence = serializers.IntegerField()
    answer = json_object(
        "{binding_key: [aliases], read: {anchor: text}}; null when it cannot be answered.", allow_null=True
    )
    cannot_answer = serializers.BooleanField()


READ_TARGET = {
    "type": "object",
    "properties": {"anchor_alias": STRINGS, "expected": {}, "normalizer_id": STRINGS},
}
DECISION_VIEW = {
    "type": "object",
    "additionalProperties": {},
    "properties": {
        "reviewer": STRINGS,
        "role": STRINGS,
        "status": STRINGS,
        "severity": STRINGS,
        "confirmations": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "packet_state": STRINGS,
        "note": STRINGS,
        "sequence": {"type": "integer"},
        "review_target_root": STRINGS,
        "blind_matched": {"type": "boolean", "nullable": True},
    },
}
BLIND_VIEW = {
    "type": "object",
    "additionalProperties": {},
    "properties": {
        "answer": {"type": "object", "nullable": True, "additionalProperties": {}},
        "cannot_answer": {"type": "boolean"},
        "reason": STRINGS,
        "matches_target": {"type": "boolean", "nullable": True},
        "sequence": {"type": "integer"},
        "display": STRINGS,
    },
}


@extend_schema_serializer(component_name="ReviewReveal")
class RevealOutput(serializers.Serializer):
    """The private side of one probe (``review.selectors.reveal_payload``), rendered exactly as that function
    assembles and redacts it: strings of siblings the reviewer has not answered blind are withheld."""

    logical_probe_id = serializers.CharField()
    interface = serializers.CharField()
    review_target_root = serializers.CharField()
    expected_binding_aliases = json_list(STRINGS)
    read = json_list(READ_TARGET, description="Expected readings per read anchor")
    packet = json_list(
        {"type": "object", "additionalProperties": {}}, description="The +GT recognition packet"
    )
    packet_plan = json_object()
    gold_messages = json_value(MESSAGES)
    source_records = json_value({"type": "array", "items": {}, "nullable": True})
    diagnostics = json_object("Compile diagnostics (probe metadata)")
    candidate_map = json_object("Alias → private candidate")
    blind_answer = json_value(BLIND_VIEW, help_text="The reviewer's own blind answer and whether it matched")
    other_decisions = json_list(
        DECISION_VIEW, description="Primary and secondary decisions (adjudicators only)"
    )
    withheld = serializers.BooleanField(help_text="Whether anything was withheld from this payload")

    def to_representation(self, instance: Any) -> Any:
        return instance  # already redacted: rendering it field by field could only change it


@extend_schema_serializer(component_name="ReviewDecision")
class DecisionOutput(serializers.Serializer):
    reviewer = serializers.CharField(source="reviewer.get_username")
    role = choice_string(Role.choices)
    status = serializers.CharField(help_text="approved | rejected")
    severity = serializers.CharField()
    confirmations = json_value({"type": "object", "additionalProperties": {"type": "boolean"}})
    packet_state = serializers.CharField()
    note = serializers.CharField()
    sequence = serializers.IntegerField()
    review_target_root = serializers.CharField()


@extend_schema_serializer(component_name="ReviewDecisionRecorded")
class DecisionRecordedOutput(DecisionOutput):
    probe_state = serializers.CharField(help_text="The probe's state after the decision")
    outcome = serializers.CharField(help_text="pending | adjudication | approved | rejected (this context)")


class KappaPairOutput(serializers.Serializer):
    rater_a = serializers.CharField()
    rater_b = serializers.CharField()
    items = serializers.IntegerField()
    observed = number(allow_null=True)
    kappa = number(allow_null=True)


class AgreementPartOutput(serializers.Serializer):
    pairs = KappaPairOutput(many=True, help_text="Cohen's κ per reviewer pair")
    fleiss = number("Fleiss' κ", allow_null=True)
    mean_probe_agreement = number(allow_null=True)


class ProbeAgreementOutput(serializers.Serializer):
    probe = serializers.CharField()
    blind = number(allow_null=True)
    decision = number(allow_null=True)
    raters = serializers.IntegerField()


class ReviewerAccuracyOutput(serializers.Serializer):
    reviewer = serializers.CharField()
    correct = serializers.IntegerField()
    answered = serializers.IntegerField()
    accuracy = number(allow_null=True)


@extend_schema_serializer(component_name="ReviewAgreement")
class AgreementOutput(serializers.Serializer):
    context = serializers.CharField()
    probes_rated = serializers.IntegerField()
    probes_multi_rated = serializers.IntegerField()
    blind = AgreementPartOutput(help_text="Agreement on blind answers")
    decision = AgreementPartOutput(help_text="Agreement on decisions")
    per_probe = ProbeAgreementOutput(many=True)
    accuracy = ReviewerAccuracyOutput(
        many=True, help_text="Each reviewer's blind accuracy against the target"
    )


@extend_schema_serializer(component_name="AuditCampaign")
class CampaignOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    campaign_id = serializers.CharField()
    policy = json_object("The sampling policy (Kit §7)")


@extend_schema_serializer(component_name="AuditCampaignListed")
class CampaignListedOutput(CampaignOutput):
    plans = serializers.SerializerMethodField()

    @extend_schema_field(
        serializers.ListField(child=serializers.IntegerField(), help_text="Plan ids, by round")
    )
    def get_plans(self, campaign: AuditCampaign) -> list[int]:
        return [plan.pk for plan in campaign.plans.all()]


@extend_schema_serializer(component_name="AuditPlan")
class PlanOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    campaign_id = serializers.CharField(source="campaign.campaign_id")
    round = serializers.IntegerField(source="round_number")
    seed = serializers.CharField()
    candidates = json_list(STRINGS)
    sample = json_list(STRINGS)
    secondary = json_list(STRINGS)
    risk = json_list(STRINGS)
    uncovered_risk_tags = json_list(STRINGS)
    blind_first = json_value(
        {"type": "object", "additionalProperties": STRINGS, "description": "parent → its blind-first probe"}
    )
    context = serializers.CharField()


class AssessmentResultOutput(serializers.Serializer):
    """``audit_stats.Assessment.as_dict()``"""

    accepted = serializers.BooleanField()
    blockers = json_list(STRINGS)
    risk = json_object("The finite-population bound")
    pending_primary_probe_ids = json_list(STRINGS)
    pending_secondary_probe_ids = json_list(STRINGS)
    unresolved_probe_ids = json_list(STRINGS)
    systemic_probe_ids = json_list(STRINGS)
    secondary_escalated_to_all_audit_parents = serializers.BooleanField()
    required_secondary_parents = json_list(STRINGS)
    confirmed_excluded_parents = json_list(STRINGS)
    retained_parents = json_list(STRINGS)
    original_observed_serious_sample_parents = json_list(STRINGS)
    protocol_violations = json_list(STRINGS)


@extend_schema_serializer(component_name="AuditPlanDetail")
class PlanDetailOutput(PlanOutput):
    live_assessment = serializers.SerializerMethodField()

    @extend_schema_field(AssessmentResultOutput)
    def get_live_assessment(self, plan: AuditPlan) -> dict[str, Any]:
        return AssessmentResultOutput(services.audit_assess_compute(plan).as_dict()).data


@extend_schema_serializer(component_name="AuditAssessment")
class AssessmentOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    accepted = serializers.BooleanField()
    result = json_object(
        "The stored assessment: the live assessment's fields plus plan_id, round, campaign_id "
        "and flagged_parents"
    )


@extend_schema_serializer(component_name="Signoff")
class SignoffOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    split = serializers.CharField()
    problem_ids = json_list(STRINGS)
    target_root = serializers.CharField()
    confirmations = serializers.SerializerMethodField()

    @extend_schema_field(
        serializers.ListField(child=serializers.CharField(), help_text="The confirmations signed")
    )
    def get_confirmations(self, signoff: Any) -> list[str]:
        return list(SIGNOFF_KEYS)


# --- the queue and slots ------------------------------------------------------------------------------


class QueueApi(APIView):
    permission_classes = [CanReview]

    @extend_schema_serializer(component_name="ReviewClaimInput")
    class InputSerializer(serializers.Serializer):
        role = choice_input([Role.PRIMARY, Role.SECONDARY, Role.ADJUDICATOR])
        context = serializers.CharField(default="development")

    @extend_schema(operation_id="review_queue", responses=QueueSlotOutput(many=True))
    def get(self, request):
        slots = []
        for row in my_slots(request.user):
            row["slot"].total, row["slot"].remaining = row["total"], row["remaining"]
            slots.append(row["slot"])
        return Response(QueueSlotOutput(slots, many=True).data)

    @extend_schema(
        operation_id="review_claim",
        request=InputSerializer,
        responses={201: SlotOutput, 400: ApiErrorOutput, 403: ApiErrorOutput, 404: ApiErrorOutput},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        slot = services.review_claim(reviewer=request.user, **data.validated_data)
        return Response(SlotOutput(slot).data, status=201)


class SlotApi(_SlotApi):
    @extend_schema(operation_id="review_slot", responses=SlotDetailOutput)
    def get(self, request, slot_id: int):
        slot = self.slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
        return Response(SlotDetailOutput(slot, context={"progress": blind_progress(slot)}).data)


class SlotReleaseApi(_SlotApi):
    @extend_schema(
        operation_id="review_slot_release", request=None, responses={200: SlotOutput, 409: ApiErrorOutput}
    )
    def post(self, request, slot_id: int):
        slot = self.slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
        return Response(SlotOutput(services.review_release(slot=slot, reviewer=request.user)).data)


class BlindOrderApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema_serializer(component_name="ReviewBlindOrderInput")
    class InputSerializer(serializers.Serializer):
        context = serializers.CharField(max_length=40)
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    @extend_schema_serializer(component_name="ReviewBlindOrder")
    class OutputSerializer(serializers.Serializer):
        context = serializers.CharField()
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    @extend_schema(operation_id="review_blind_order_set", request=InputSerializer, responses=OutputSerializer)
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
    @extend_schema(operation_id="review_probe_public", responses=ProbePublicOutput)
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
        responses={201: BlindOutput, 400: ApiErrorOutput, 409: ApiErrorOutput},
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
    @extend_schema(operation_id="review_target_reveal", responses={200: RevealOutput, 403: ApiErrorOutput})
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
        responses={201: DecisionRecordedOutput, 400: ApiErrorOutput, 403: ApiErrorOutput},
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
        decision.probe_state = probe.state
        decision.outcome = services.probe_outcome(probe, slot.context).state
        return Response(DecisionRecordedOutput(decision).data, status=201)


# --- agreement, audit, signoff ------------------------------------------------------------------------


class AgreementApi(APIView):
    permission_classes = [CanViewAgreement]

    class FilterSerializer(serializers.Serializer):
        context = serializers.CharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="development",
            help_text="development (default) or audit:<plan id>",
        )

    @extend_schema(operation_id="review_agreement", responses=AgreementOutput, parameters=[FilterSerializer])
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return Response(AgreementOutput(agreement_json(agreement_report(**filters.validated_data))).data)


class CampaignListApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(operation_id="review_campaigns", responses=CampaignListedOutput(many=True))
    def get(self, request):
        return Response(CampaignListedOutput(AuditCampaign.objects.all(), many=True).data)

    @extend_schema(operation_id="review_campaign_create", request=None, responses={201: CampaignOutput})
    def post(self, request):
        campaign = services.audit_campaign_create(actor=request.user)
        return Response(CampaignOutput(campaign).data, status=201)


class PlanCreateApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(
        operation_id="review_plan_create",
        request=None,
        responses={201: PlanOutput, 400: ApiErrorOutput, 409: ApiErrorOutput},
    )
    def post(self, request, campaign_pk: int):
        campaign = get_object_or_404(AuditCampaign, pk=campaign_pk)
        return Response(
            PlanOutput(services.audit_plan_create(campaign=campaign, actor=request.user)).data, status=201
        )


class PlanApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(operation_id="review_plan", responses=PlanDetailOutput)
    def get(self, request, plan_pk: int):
        return Response(PlanDetailOutput(get_object_or_404(AuditPlan, pk=plan_pk)).data)


class AssessApi(APIView):
    permission_classes = [CanManageAudit]

    @extend_schema(
        operation_id="review_plan_assess",
        request=None,
        responses={201: AssessmentOutput, 400: ApiErrorOutput, 409: ApiErrorOutput},
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
        responses={201: SignoffOutput, 400: ApiErrorOutput, 409: ApiErrorOutput},
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
