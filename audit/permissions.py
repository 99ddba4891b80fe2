from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin


def can_view_events(user: Any) -> bool:
    return is_admin(user)
