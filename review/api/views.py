"""REST for review: the queue, public probe, blind answer, the reveal gate, decisions, agreement, audit, signoff.
Each view validates, calls one service and answers; permissions are the same helpers the pages use."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

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


def _require(allowed: bool) -> None:
    if not allowed:
        raise PermissionDenied("You do not have permission for this.")


def _slot_probe(request, slot_id: int, logical_probe_id: str) -> tuple[ReviewSlot, Probe]:
    slot = get_object_or_404(ReviewSlot, pk=slot_id)
    _require(can_work_slot(request.user, slot))
    probe = get_object_or_404(Probe.objects.select_related("key", "parent"), logical_probe_id=logical_probe_id)
    if probe.logical_probe_id not in {p.logical_probe_id for p in slot_work(slot, include_done=True)}:
        raise NotFound("This probe is not part of the assignment.")
    return slot, probe


def _slot_out(slot: ReviewSlot) -> dict:
    return {"id": slot.pk, "problem_id": slot.parent.problem_id, "role": slot.role, "context": slot.context,
            "blind_first_probe_id": slot.blind_first_probe_id}


def _gate_out(gate: Gate) -> dict:
    return {"allowed": gate.allowed, "code": gate.code, "message": gate.message}


def _require_gate(gate: Gate) -> None:
    if not gate.allowed:
        raise ApplicationError(gate.message, code=gate.code, status=403)


def _decision_out(d) -> dict:
    return {"reviewer": d.reviewer.get_username(), "role": d.role, "status": d.status, "severity": d.severity,
            "confirmations": d.confirmations, "packet_state": d.packet_state, "note": d.note, "sequence": d.sequence,
            "review_target_root": d.review_target_root}


class QueueApi(APIView):
    class Input(serializers.Serializer):
        role = serializers.ChoiceField(choices=[Role.PRIMARY, Role.SECONDARY, Role.ADJUDICATOR])
        context = serializers.CharField(default="development")

    @extend_schema(operation_id="review_queue", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_review(request.user))
        return Response([{**_slot_out(r["slot"]), "total": r["total"], "remaining": r["remaining"]}
                         for r in my_slots(request.user)])

    @extend_schema(operation_id="review_claim", request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request):
        _require(can_review(request.user))
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        slot = services.review_claim(reviewer=request.user, **data.validated_data)
        return Response(_slot_out(slot), status=201)


class SlotApi(APIView):
    @extend_schema(operation_id="review_slot", responses=OpenApiTypes.OBJECT)
    def get(self, request, slot_id: int):
        slot = get_object_or_404(ReviewSlot.objects.select_related("parent"), pk=slot_id)
        _require(can_work_slot(request.user, slot))
        progress = blind_progress(slot)
        return Response({**_slot_out(slot), "blind_order": progress.order, "probes": [
            {"logical_probe_id": r.probe.logical_probe_id, "interface": r.probe.interface,
             "blind_answered": r.blind is not None, "decided": r.decision is not None,
             "stale_decisions": r.stale_decisions, "blind_first": r.blind_first,
             "answer": _gate_out(progress.answer_gate(r.probe)), "reveal": _gate_out(progress.reveal_gate(r.probe))}
            for r in slot_rows(slot)]})


class SlotOutput(serializers.Serializer):
    id = serializers.IntegerField()
    problem_id = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    context = serializers.CharField()
    blind_first_probe_id = serializers.CharField()


class SlotReleaseApi(APIView):
    @extend_schema(operation_id="review_slot_release", request=None, responses=SlotOutput)
    def post(self, request, slot_id: int):
        slot = get_object_or_404(ReviewSlot.objects.select_related("parent"), pk=slot_id)
        _require(can_work_slot(request.user, slot))
        return Response(SlotOutput(_slot_out(services.review_release(slot=slot, reviewer=request.user))).data)


class BlindOrderApi(APIView):
    class Input(serializers.Serializer):
        context = serializers.CharField(max_length=40)
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    class Output(serializers.Serializer):
        context = serializers.CharField()
        blind_order = serializers.ChoiceField(choices=BlindOrder.values)

    @extend_schema(operation_id="review_blind_order_set", request=Input, responses=Output)
    def post(self, request):
        _require(can_manage_audit(request.user))
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        setting = services.review_context_set_blind_order(context=data.validated_data["context"],
                                                          order=data.validated_data["blind_order"], actor=request.user)
        return Response(self.Output(setting).data)


class ProbePublicApi(APIView):
    @extend_schema(operation_id="review_probe_public", responses=OpenApiTypes.OBJECT)
    def get(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = _slot_probe(request, slot_id, logical_probe_id)
        progress = blind_progress(slot)
        return Response({"logical_probe_id": probe.logical_probe_id, "interface": probe.interface,
                         "messages": probe.raw_messages, "attachment_ids": probe.attachment_ids,
                         "contract": services.contract_of(probe), "blind_answered": probe.pk in progress.answered,
                         "answer": _gate_out(progress.answer_gate(probe)),
                         "reveal": _gate_out(progress.reveal_gate(probe))})


class BlindApi(APIView):
    class Input(serializers.Serializer):
        binding = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        read = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False, default=dict)
        cannot_answer = serializers.BooleanField(required=False, default=False)
        reason = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(operation_id="review_blind_submit", request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = _slot_probe(request, slot_id, logical_probe_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        blind = services.review_submit_blind(slot=slot, probe=probe, reviewer=request.user,
                                             given=services.BlindAnswerIn(**data.validated_data))
        return Response({"sequence": blind.sequence, "answer": blind.answer, "cannot_answer": blind.cannot_answer},
                        status=201)


class TargetApi(APIView):
    @extend_schema(operation_id="review_target_reveal", responses=OpenApiTypes.OBJECT)
    def get(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = _slot_probe(request, slot_id, logical_probe_id)
        _require_gate(blind_progress(slot).reveal_gate(probe))
        return Response(reveal_payload(slot, probe))


class DecisionApi(APIView):
    class Input(serializers.Serializer):
        status = serializers.ChoiceField(choices=["approved", "rejected"])
        severity = serializers.CharField()
        confirmations = serializers.DictField(child=serializers.BooleanField())
        packet_state = serializers.CharField()
        packet_empty_reason = serializers.CharField(required=False, allow_blank=True, default="")
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(operation_id="review_decide", request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request, slot_id: int, logical_probe_id: str):
        slot, probe = _slot_probe(request, slot_id, logical_probe_id)
        _require_gate(blind_progress(slot).reveal_gate(probe))
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.review_decide(slot=slot, probe=probe, reviewer=request.user,
                                          given=services.DecisionIn(**data.validated_data))
        probe.refresh_from_db()
        return Response({**_decision_out(decision), "probe_state": probe.state,
                         "outcome": services.probe_outcome(probe, slot.context).state}, status=201)


class AgreementApi(APIView):
    @extend_schema(operation_id="review_agreement", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_view_agreement(request.user))
        return Response(agreement_json(agreement_report(context=request.query_params.get("context", "development"))))


def _plan_out(plan: AuditPlan) -> dict:
    return {"id": plan.pk, "campaign_id": plan.campaign.campaign_id, "round": plan.round_number, "seed": plan.seed,
            "candidates": plan.candidates, "sample": plan.sample, "secondary": plan.secondary, "risk": plan.risk,
            "uncovered_risk_tags": plan.uncovered_risk_tags, "blind_first": plan.blind_first,
            "context": plan.context}


class CampaignListApi(APIView):
    @extend_schema(operation_id="review_campaigns", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_manage_audit(request.user))
        return Response([{"id": c.pk, "campaign_id": c.campaign_id, "policy": c.policy,
                          "plans": [p.pk for p in c.plans.all()]} for c in AuditCampaign.objects.all()])

    @extend_schema(operation_id="review_campaign_create", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request):
        _require(can_manage_audit(request.user))
        campaign = services.audit_campaign_create(actor=request.user)
        return Response({"id": campaign.pk, "campaign_id": campaign.campaign_id, "policy": campaign.policy}, status=201)


class PlanCreateApi(APIView):
    @extend_schema(operation_id="review_plan_create", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, campaign_pk: int):
        _require(can_manage_audit(request.user))
        campaign = get_object_or_404(AuditCampaign, pk=campaign_pk)
        return Response(_plan_out(services.audit_plan_create(campaign=campaign, actor=request.user)), status=201)


class PlanApi(APIView):
    @extend_schema(operation_id="review_plan", responses=OpenApiTypes.OBJECT)
    def get(self, request, plan_pk: int):
        _require(can_manage_audit(request.user))
        plan = get_object_or_404(AuditPlan, pk=plan_pk)
        return Response({**_plan_out(plan), "live_assessment": services.audit_assess_compute(plan).as_dict()})


class AssessApi(APIView):
    @extend_schema(operation_id="review_plan_assess", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, plan_pk: int):
        _require(can_manage_audit(request.user))
        plan = get_object_or_404(AuditPlan, pk=plan_pk)
        assessment = services.audit_assess(plan=plan, actor=request.user)
        return Response({"id": assessment.pk, "accepted": assessment.accepted, "result": assessment.result}, status=201)


class SignoffApi(APIView):
    class Input(serializers.Serializer):
        mode = serializers.ChoiceField(choices=["audit", "individual"])
        assessment = serializers.IntegerField(required=False, allow_null=True, default=None)
        confirmations = serializers.DictField(child=serializers.BooleanField())
        evidence_ref = serializers.CharField()

    @extend_schema(operation_id="review_signoff_create", request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request):
        _require(can_manage_audit(request.user))
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        assessment = AuditAssessment.objects.filter(pk=values["assessment"]).first() if values["assessment"] else None
        signoff = services.signoff_create(actor=request.user, mode=values["mode"], assessment=assessment,
                                          confirmations=values["confirmations"], evidence_ref=values["evidence_ref"])
        return Response({"id": signoff.pk, "split": signoff.split, "problem_ids": signoff.problem_ids,
                         "target_root": signoff.target_root, "confirmations": list(SIGNOFF_KEYS)}, status=201)



