"""Roles are Django groups. Every permission check in views and API goes through these helpers."""

from __future__ import annotations

from typing import Any

ANNOTATOR = "annotator"
SOURCE_REVIEWER = "source_reviewer"
PROBE_REVIEWER = "probe_reviewer"
ADJUDICATOR = "adjudicator"
ADMIN = "admin"
ALL_ROLES = (ANNOTATOR, SOURCE_REVIEWER, PROBE_REVIEWER, ADJUDICATOR, ADMIN)


def user_roles(user: Any) -> frozenset[str]:
    if user is None or not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_physalign_roles", None)
    if cached is None:
        names = set(user.groups.values_list("name", flat=True)) & set(ALL_ROLES)
        if user.is_superuser:
            names.add(ADMIN)
        cached = frozenset(names)
        user._physalign_roles = cached
    return cached


def has_role(user: Any, *roles: str) -> bool:
    held = user_roles(user)
    return ADMIN in held or any(role in held for role in roles)


def is_admin(user: Any) -> bool:
    return ADMIN in user_roles(user)


def roles_context(request: Any) -> dict[str, Any]:
    roles = user_roles(getattr(request, "user", None))
    return {"user_roles": sorted(roles), "is_admin_role": ADMIN in roles}
