"""Who may run solving and debate runs and grade their responses."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin


def can_run_solving(user: Any) -> bool:
    """Launching, cancelling, reading and grading solve and debate runs: admins."""
    return is_admin(user)
