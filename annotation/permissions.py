"""Who may do what with problems and pass documents. Used by HTML views and the API alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import (
    ADJUDICATOR,
    ANNOTATOR,
    PROBE_REVIEWER,
    SOURCE_REVIEWER,
    has_role,
    is_admin,
)


def can_view_problems(user: Any) -> bool:
    return has_role(user, ANNOTATOR, SOURCE_REVIEWER, PROBE_REVIEWER, ADJUDICATOR)


def can_view_private_fields(user: Any) -> bool:
    """Answer and solution: admins only (answer-blind protocol, paper §3.2)."""
    return is_admin(user)


def can_import(user: Any) -> bool:
    return has_role(user, ANNOTATOR)


def can_manage_sources(user: Any) -> bool:
    return is_admin(user)


def can_read_pass(user: Any, pass_no: int) -> bool:
    return has_role(user, ANNOTATOR, SOURCE_REVIEWER)


def can_edit_pass(user: Any, pass_no: int) -> bool:
    return has_role(user, ANNOTATOR)


def can_review_pass(user: Any) -> bool:
    return has_role(user, SOURCE_REVIEWER)


def can_view_events(user: Any) -> bool:
    return is_admin(user)
