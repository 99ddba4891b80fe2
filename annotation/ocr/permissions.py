"""Who may start OCR runs and decide their proposals. Used by the API, the page and the services alike."""

from __future__ import annotations

from typing import Any

from physalign_site.roles import is_admin

from ..permissions import can_edit_pass, can_read_pass

OCR_PASS = 1  # OCR proposes Pass 1 text glyphs only


def can_view_ocr(user: Any) -> bool:
    """Runs and proposals are read by whoever may read Pass 1 (annotators, source reviewers, admins)."""
    return can_read_pass(user, OCR_PASS)


def can_run_ocr(user: Any) -> bool:
    """A run for one problem proposes what its Pass 1 editor would type: whoever may edit Pass 1."""
    return can_edit_pass(user, OCR_PASS)


def can_run_ocr_for_source(user: Any) -> bool:
    """A run over a whole source puts suggestions on every problem of it, in other annotators' workspaces,
    and holds a worker for minutes (about a second an image): admins only, the same people who manage
    sources. Importing is an annotator's right, but an import adds problems, it changes none of others'."""
    return is_admin(user)


def can_decide_ocr(user: Any) -> bool:
    """Accepting a proposal writes Pass 1 (through its versioned save): whoever may edit Pass 1. A reviewer
    who only reads Pass 1 sees the suggestions but cannot decide them."""
    return can_edit_pass(user, OCR_PASS)
