"""Who manages assignments (admins), who may hold one (a user with the role), and who may edit a problem's
passes when its source is strict. Used by the page, the API and the services alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import ANNOTATOR, SOURCE_REVIEWER, is_admin, user_roles

# Assignment.role → the role (Django group) its assignee must hold
ASSIGNMENT_ROLES = {"annotator": ANNOTATOR, "source_reviewer": SOURCE_REVIEWER}
ROLE_NOUNS = {"annotator": "an annotator", "source_reviewer": "a source reviewer"}


def can_manage_assignments(user: Any) -> bool:
    return is_admin(user)


def may_hold_assignment(user: Any, role: str) -> bool:
    """An active account holding the role itself (its group): an admin without the annotator role is not an
    annotator here, however much they may do."""
    return (
        role in ASSIGNMENT_ROLES
        and bool(getattr(user, "is_active", False))
        and ASSIGNMENT_ROLES[role] in user_roles(user)
    )


def strict_edit_allowed(user: Any, *, strict: bool, assignee_id: int | None) -> bool:
    """The rule of strict assignment: on a strict source only the problem's assigned annotator (and admins)
    edits its passes, and an unassigned problem is nobody's but the admins'. Off a strict source, assignment
    orders work and locks nothing. ``user=None`` is the server's operator (imports, commands): never refused."""
    if user is None or not strict or is_admin(user):
        return True
    return assignee_id is not None and assignee_id == getattr(user, "pk", None)
