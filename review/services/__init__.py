"""Every write of the review app, one job per module: ``slots`` (the queue, claims and blind answers),
``decisions`` (decisions and settling a probe's outcome), ``batch_audit`` (campaigns, plans, assessments),
``signoff`` (signoff and the gated release export) and ``kit_review`` (a Kit review project's drafts and
decisions).
"""

from .batch_audit import (
    POLICY,
    audit_assess,
    audit_assess_compute,
    audit_campaign_create,
    audit_plan_create,
    audit_sync_slots,
)
from .decisions import DecisionIn, review_decide, review_settle
from .kit_review import (
    KIT_DECISION_FILE_MAX_BYTES,
    KitImportReport,
    kit_decisions_import,
    kit_decisions_upload,
    kit_draft_import,
    kit_draft_upload,
)
from .signoff import signoff_create, signoff_export, signoff_target
from .slots import (
    DEFECT,
    DEVELOPMENT,
    EMPTY_REASONS,
    BlindAnswerIn,
    blind_first_probe,
    blind_label,
    blind_matches_target,
    contract_of,
    review_claim,
    review_context_set_blind_order,
    review_release,
    review_slots_ensure_development,
    review_submit_blind,
)

__all__ = [
    "DEVELOPMENT",
    "EMPTY_REASONS",
    "DEFECT",
    "BlindAnswerIn",
    "contract_of",
    "blind_matches_target",
    "blind_label",
    "blind_first_probe",
    "review_slots_ensure_development",
    "review_claim",
    "review_release",
    "review_context_set_blind_order",
    "review_submit_blind",
    "DecisionIn",
    "review_decide",
    "review_settle",
    "POLICY",
    "audit_campaign_create",
    "audit_plan_create",
    "audit_sync_slots",
    "audit_assess_compute",
    "audit_assess",
    "signoff_target",
    "signoff_create",
    "signoff_export",
    "kit_draft_import",
    "KitImportReport",
    "kit_decisions_import",
    "kit_draft_upload",
    "KIT_DECISION_FILE_MAX_BYTES",
    "kit_decisions_upload",
]
