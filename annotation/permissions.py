"""Who may do what with problems and pass documents. Used by HTML views and the API alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import (
    ADJUDICATOR,
    ANNOTATOR,
    PROBE_REVIEWER,
    SOURCE_REVIEWER,
    has_role,
    is_admin,
)


def can_view_problems(user: Any) -> bool:
    return has_role(user, ANNOTATOR, SOURCE_REVIEWER, PROBE_REVIEWER, ADJUDICATOR)


def can_import(user: Any) -> bool:
    return has_role(user, ANNOTATOR)


def can_edit_private_fields(user: Any) -> bool:
    """Answer and solution of an existing problem change only by admins (an import by anyone else keeps them)."""
    return is_admin(user)


def can_manage_sources(user: Any) -> bool:
    return is_admin(user)


SOLUTION_PASS = 5  # Pass 5 aligns solution steps: annotators (and admins) only, never reviewers of 1–4.


def can_read_pass(user: Any, pass_no: int) -> bool:
    if pass_no == SOLUTION_PASS:
        return has_role(user, ANNOTATOR)
    return has_role(user, ANNOTATOR, SOURCE_REVIEWER)


def can_edit_pass(user: Any, pass_no: int) -> bool:
    return has_role(user, ANNOTATOR)


def can_submit_pass(user: Any, pass_no: int) -> bool:
    """Submitting for review is the annotator's last step (DESIGN §1), so it follows edit rights."""
    return can_edit_pass(user, pass_no)


def can_review_pass(user: Any) -> bool:
    return has_role(user, SOURCE_REVIEWER)


def can_import_review_state(user: Any) -> bool:
    """Review decisions carried in an imported file (approvals, rejections, exclusions) count only when the
    uploader could have made them here: source reviewers and admins."""
    return can_review_pass(user)


def is_self_review(
    user: Any, *, last_editor_id: int | None = None, annotator_ids: frozenset[int] = frozenset()
) -> bool:
    """A source reviewer may not approve or reject a pass document they annotated (admins may): the one who
    edited it last, and everyone in ``annotator_ids`` (whoever saved a version of it and the problem's assigned
    annotator: ``annotation.source_reviews.pass_annotator_ids`` gathers them)."""
    pk = getattr(user, "pk", None)
    if pk is None or is_admin(user):
        return False
    return pk == last_editor_id or pk in annotator_ids


def can_review_pass_no(user: Any, pass_no: int) -> bool:
    """Approve/reject a given pass: a reviewer must also be allowed to read what they approve."""
    return can_review_pass(user) and can_read_pass(user, pass_no)


def can_view_import_jobs(user: Any) -> bool:
    return can_import(user)


DRAFTABLE_PASSES = (1, 2, 3, 4, 5)


def can_draft(user: Any, pass_no: int) -> bool:
    """Drafting and deciding on drafts follow the right to edit the pass."""
    return pass_no in DRAFTABLE_PASSES and can_edit_pass(user, pass_no)


def can_open_pass_review(user: Any, pass_no: int) -> bool:
    """The review page: whoever may read the pass and either review it or edit it (to see what reviewers see)."""
    return can_read_pass(user, pass_no) and (
        can_review_pass_no(user, pass_no) or can_edit_pass(user, pass_no)
    )
