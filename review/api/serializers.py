"""What the review API returns: every response body as a named serializer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from physalign_site.api import (
    choice_string,
    json_list,
    json_object,
    json_value,
    number,
)
from probes.models import Probe
from review import services
from review.models import (
    SIGNOFF_KEYS,
    AuditCampaign,
    AuditPlan,
    BlindOrder,
    ReviewSlot,
    Role,
)
from review.selectors import slot_rows

MESSAGES = {
    "type": "object",
    "description": "The chat messages a model receives (Kit §4).",
    "properties": {"system": {"type": "string"}, "user": {"type": "string"}},
}
STRINGS = {"type": "string"}
STRING_LIST = {"type": "array", "items": STRINGS}
# a blind answer as stored: the contract's binding key → the aliases chosen, ``read`` → anchor → the text read
BLIND_ANSWER = {
    "type": "object",
    "nullable": True,
    "description": "{<binding_key>: [aliases], read: {anchor: text}}; null when it cannot be answered.",
    "additionalProperties": {
        "oneOf": [STRING_LIST, {"type": "object", "additionalProperties": STRINGS}],
    },
}


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
    # The output field ``context`` shares its name with Serializer.context: DRF's metaclass takes declared
    # fields off the class, so ``self.context`` stays the serializer context, as annotated here.
    context: Mapping[str, Any] = serializers.CharField(help_text="development, or audit:<plan id>")  # type: ignore[assignment]
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
        # many=True makes a ListSerializer, whose data is a list (the stubs type it ReturnDict)
        return SlotProbeOutput(slot_rows(slot), many=True, context=self.context).data  # type: ignore[return-value]


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
    answer = json_value(BLIND_ANSWER, allow_null=True)
    cannot_answer = serializers.BooleanField()


READ_TARGET = {
    "type": "object",
    "properties": {"anchor_alias": STRINGS, "expected": STRINGS, "normalizer_id": STRINGS},
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
        "answer": BLIND_ANSWER,
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
        {
            "type": "object",
            "additionalProperties": {},
            "description": "An entry of the Kit recognition packet",
        },
        description="The +GT recognition packet",
    )
    packet_plan = json_object("The Kit probe key's packet plan (observation ids, …)")
    gold_messages = json_value(MESSAGES)
    source_records = json_value(
        {
            "type": "array",
            "nullable": True,
            "items": {"type": "object", "additionalProperties": {}, "description": "A Kit source record"},
        }
    )
    diagnostics = json_object("The Kit probe metadata (compile diagnostics)")
    candidate_map = json_object("The Kit probe key's candidate map: alias → private candidate")
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
    context = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
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
    context = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class


class FiniteRiskOutput(serializers.Serializer):
    """``audit_stats.FiniteRisk.as_dict()``"""

    population_parents = serializers.IntegerField()
    sample_parents = serializers.IntegerField()
    detected_sample_parents = serializers.IntegerField()
    upper_defective_parents_original = serializers.IntegerField()
    removed_confirmed_parents = serializers.IntegerField()
    remaining_population_parents = serializers.IntegerField()
    upper_remaining_numerator = serializers.IntegerField()
    upper_remaining_denominator = serializers.IntegerField()
    upper_remaining_fraction = number(allow_null=True)
    passes_5_percent = serializers.BooleanField()
    confidence = serializers.CharField()


class AssessmentResultOutput(serializers.Serializer):
    """``audit_stats.Assessment.as_dict()``"""

    accepted = serializers.BooleanField()
    blockers = json_list(STRINGS)
    risk = FiniteRiskOutput(help_text="The finite-population bound (one-sided 97.5% hypergeometric)")
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


class StoredAssessmentOutput(AssessmentResultOutput):
    """What ``audit_assess`` stores: the live assessment's fields plus the plan it assessed."""

    plan_id = serializers.IntegerField()
    round = serializers.IntegerField()
    campaign_id = serializers.CharField()
    flagged_parents = json_list(STRINGS)


@extend_schema_field(StoredAssessmentOutput)
class StoredAssessmentField(serializers.JSONField):
    """The stored assessment, rendered as stored (its hash is ``result_root``)."""


@extend_schema_serializer(component_name="AuditAssessment")
class AssessmentOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    accepted = serializers.BooleanField()
    result = StoredAssessmentField(help_text="The stored assessment")


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
