"""Who may do what with double annotation."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import ANNOTATOR, has_role, is_admin


def can_manage_double_annotation(user: Any) -> bool:
    """Ask for samples and see who annotates what: admins."""
    return is_admin(user)


def can_annotate_independently(user: Any) -> bool:
    """Open the independent-annotation pages and API at all: annotators (each their own) and admins."""
    return has_role(user, ANNOTATOR)
