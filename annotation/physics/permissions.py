"""Who may read the physics rules and who may make one blocking. Used by the page and the API alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin

from ..permissions import can_view_problems


def can_view_physics_rules(user: Any) -> bool:
    """The rule table is what the workspace's warnings refer to: whoever may view problems may read it."""
    return can_view_problems(user)


def can_manage_physics_rules(user: Any) -> bool:
    """Making a rule blocking refuses every annotator's submit on it: admins only."""
    return is_admin(user)
