"""Who may see and change model configurations."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import ANNOTATOR, has_role, is_admin


def can_manage_models(user: Any) -> bool:
    return is_admin(user)


def can_list_models(user: Any) -> bool:
    """Annotators pick a model for drafting; they see names and settings, never keys (none are stored)."""
    return has_role(user, ANNOTATOR)
