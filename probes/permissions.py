"""Who may do what with compile runs, probes and releases. Used by views and the API alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin

PRIVATE_MAPPING_PERMISSION = "probes.view_private_mapping"


def can_manage_probes(user: Any) -> bool:
    """Launch compile runs, browse probes with their public prompts, export and import releases."""
    return is_admin(user)


def can_view_private_mapping(user: Any) -> bool:
    """The scorer permission: the admin role *and* the Django permission ``probes.view_private_mapping``."""
    return (
        is_admin(user) and bool(getattr(user, "has_perm", None)) and user.has_perm(PRIVATE_MAPPING_PERMISSION)
    )


def can_read_public_release(user: Any) -> bool:
    """Any authenticated API client may pull a release's public part."""
    return bool(getattr(user, "is_authenticated", False))
