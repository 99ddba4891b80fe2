"""Who may see annotation agreement: admins only. The figures show the first annotation's counts (regions,
entities, quantities), which a second annotator must never see; admins are never second annotators
(``annotation.double.services``), and no other role sees the pages either."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin


def can_view_annotation_agreement(user: Any) -> bool:
    return is_admin(user)
