"""Who may curate a pass (reconcile its two annotations): admins, and source reviewers who are neither the
parent's second annotator (the page shows the first annotation, which the second annotator never sees) nor the
last editor of the first annotation's document (nobody curates, then reviews, their own work)."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import SOURCE_REVIEWER, has_role, is_admin


def can_curate(user: Any) -> bool:
    """The role check of the page and the API, before any object is loaded (then ``curation_refusal``)."""
    return has_role(user, SOURCE_REVIEWER)


def is_second_annotator(user: Any, *, second_annotator_id: int | None) -> bool:
    return second_annotator_id is not None and getattr(user, "pk", None) == second_annotator_id


def curation_refusal(user: Any, *, second_annotator_id: int | None, last_editor_id: int | None) -> str:
    """Why ``user`` may not curate this parent's pass ('' when they may). The second annotator is refused even if
    they held the admin role; the last editor of the first document only when not an admin."""
    if is_second_annotator(user, second_annotator_id=second_annotator_id):
        return (
            "You annotate this problem a second time, independently: its first annotation (which curation shows) "
            "is hidden from you."
        )
    if not is_admin(user) and last_editor_id is not None and getattr(user, "pk", None) == last_editor_id:
        return "You edited the first annotation of this pass last; ask another source reviewer to curate it."
    return ""
