"""Who may see annotation analytics: admins only. The figures name every annotator and their rejections, so an
annotator (or a reviewer) sees neither their own page of figures nor anyone else's."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin


def can_view_annotation_analytics(user: Any) -> bool:
    return is_admin(user)
