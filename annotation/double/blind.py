"""The one rule of double annotation's independence: the second annotator of a parent never sees its first
annotation — its pass documents, LLM drafts, OCR decisions, versions, diffs, review comments or counts — on any
page, API or download, and cannot change it.

Every request whose URL names a problem goes through :class:`annotation.double.middleware.FirstAnnotationBlind`,
which asks :func:`first_annotation_hidden`; lists and summaries that show many parents ask
:func:`hidden_problem_ids` and leave those parents' annotation out. The second annotator's own documents live
apart (``IndependentPassDocument``) and are served only by ``annotation.double``'s own pages and API.
"""

from __future__ import annotations

from typing import Any

from physalign_site.errors import ApplicationError
from physalign_site.roles import ANNOTATOR, is_admin, user_roles

BLIND_CODE = "independent_annotation_blind"


def hidden_problem_ids(user: Any) -> frozenset[str]:
    """The problems whose first annotation ``user`` may not see: those they annotate a second time. Read once per
    request (cached on the user object, like the roles); admins, who may never be second annotators, and users
    without the annotator role cost no query."""
    cached = getattr(user, "_physalign_hidden_problems", None)
    if cached is not None:
        return cached
    roles = user_roles(user)
    if ANNOTATOR not in roles or is_admin(user):
        hidden: frozenset[str] = frozenset()
    else:
        from annotation.models import SecondAnnotation

        hidden = frozenset(
            SecondAnnotation.objects.filter(annotator=user).values_list("parent__problem_id", flat=True)
        )
    if getattr(user, "is_authenticated", False):
        user._physalign_hidden_problems = hidden
    return hidden


def first_annotation_hidden(user: Any, problem_id: str) -> bool:
    return problem_id in hidden_problem_ids(user)


def require_first_annotation_visible(user: Any, problem_id: str) -> None:
    """Refuse (403) a second annotator anything of the first annotation of ``problem_id``."""
    if first_annotation_hidden(user, problem_id):
        raise ApplicationError(
            "You annotate this problem a second time, independently: its first annotation is hidden from you. "
            "Open your own annotation of it instead.",
            code=BLIND_CODE,
            status=403,
            extra={"problem_id": problem_id},
        )


def forget_hidden(user: Any) -> None:
    """Drop the per-request cache (after a sample assigns ``user`` in the same request)."""
    if hasattr(user, "_physalign_hidden_problems"):
        del user._physalign_hidden_problems
