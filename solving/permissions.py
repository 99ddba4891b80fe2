"""Who may run solving and debate runs and grade their responses."""

from __future__ import annotations

from typing import Any

from audit.disclosure import can_know_targets
from physalign_site.roles import is_admin


def can_run_solving(user: Any) -> bool:
    """Launching, cancelling, reading and grading solve and debate runs: admins."""
    return is_admin(user)


def can_grade_solving(user: Any) -> bool:
    """Expert grading is done against the reference answer and solution: key holders only (who may know a
    target is one rule, :func:`audit.disclosure.can_know_targets`)."""
    return can_run_solving(user) and can_know_targets(user)
