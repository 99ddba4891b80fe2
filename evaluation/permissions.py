"""Who may run evaluations."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin


def can_run_evaluations(user: Any) -> bool:
    """Launching, cancelling and reading evaluation runs, results and raw outputs: admins."""
    return is_admin(user)
