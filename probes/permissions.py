"""Who may do what with compile runs, probes and releases. Used by views and the API alike."""

from __future__ import annotations

from typing import Any

from audit.disclosure import KEY_PERMISSION, can_know_targets
from physalign_site.roles import is_admin, user_roles

PRIVATE_MAPPING_PERMISSION = KEY_PERMISSION


def can_manage_probes(user: Any) -> bool:
    """Launch compile runs, browse probes with their public prompts, export and import releases."""
    return is_admin(user)


def can_view_private_mapping(user: Any) -> bool:
    """The scorer permission: the admin role *and* the Django permission ``probes.view_private_mapping``
    (the one rule, :func:`audit.disclosure.can_know_targets`)."""
    return can_know_targets(user)


def can_read_public_release(user: Any) -> bool:
    """A release's public part (list, detail, public probes, the public zip): any user who holds a role. A
    signed-in account without one (a new sign-up, a deactivated member) reads nothing; to publish a release
    to the world, hand out its public zip or Hugging Face export."""
    return bool(user_roles(user))
