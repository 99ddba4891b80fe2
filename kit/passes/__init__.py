"""Pure (Django-free) checks of PhysGraph pass documents and mention spans (Kit §2.4, §2.7)."""

from .spans import (
    AMBIGUOUS_OCCURRENCE,
    MATCH_POLICY,
    QUOTE_NOT_FOUND,
    REPAIR_POLICY,
    REPAIRED_UNIQUE_EXACT,
    RESOLVED_EXACT,
    UNIQUE_EXACT_REPAIR_PROPOSED,
    SpanResolution,
    SpanStructuralError,
    apply_unique_exact_repair,
    find_exact_matches,
    resolve_span,
)
from .validator import (
    ISSUE_CODES,
    SCHEMA_VERSION,
    ImageRef,
    PassContext,
    ValidationIssue,
    validate_pass_document,
)

__all__ = [
    "AMBIGUOUS_OCCURRENCE",
    "ISSUE_CODES",
    "MATCH_POLICY",
    "QUOTE_NOT_FOUND",
    "REPAIRED_UNIQUE_EXACT",
    "REPAIR_POLICY",
    "RESOLVED_EXACT",
    "SCHEMA_VERSION",
    "UNIQUE_EXACT_REPAIR_PROPOSED",
    "ImageRef",
    "PassContext",
    "SpanResolution",
    "SpanStructuralError",
    "ValidationIssue",
    "apply_unique_exact_repair",
    "find_exact_matches",
    "resolve_span",
    "validate_pass_document",
]
