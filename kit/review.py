"""The Kit's review vocabulary (Kit §6, §7): the words every review record, decision file and release
proof uses. One place for the app's forms, the Kit-decision importer and the release layout. Pure."""

from __future__ import annotations

# The six per-probe confirmations a reviewer ticks before approving (HUMAN_REVIEW_GUIDE).
CONFIRMATIONS = (
    "source_semantics",
    "complete_targets",
    "distinct_candidates",
    "rendered_locations",
    "packet_no_binding_leakage",
    "diagram_asset_scope",
)
# The six release signoff confirmations (native_release_signoff_v1); all must be true.
SIGNOFF_CHECKS = (
    "source_and_rules_checked",
    "known_systemic_and_unresolved_issues_zero",
    "near_duplicates_and_external_splits_checked",
    "not_selected_by_model_performance",
    "review_evidence_authentic",
    "data_use_authorized",
)
SEVERITIES = ("none", "minor", "serious", "systemic", "information", "unresolved")

# The fields every Kit review decision record carries (both the legacy and the native decision files).
DECISION_BASE_FIELDS = (
    "logical_probe_id",
    "review_target_root",
    "status",
    "reviewer",
    "blind_answer",
    "confirmations",
    "note",
)
