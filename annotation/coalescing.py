"""When an autosave joins the working version instead of starting a new one (issue 28 item 5). Django-free.

The workspace saves after every edit, so a version per save buries the history (v14 after ten edits). A save
joins the newest version, replacing its document, only when all of these hold:

- the save is a plain one (no revert, no accepted draft, no import: those always start a version and are kept
  as they were, ``absorbs_saves`` false on theirs);
- the newest version was made by a plain save, by the same (known) user;
- the document is still a draft: a submit, an approval or a rejection since that save left it submitted,
  approved or rejected, so the next save starts a version;
- nothing saved in between (the version holds the save counter the document had before this save);
- the save comes within the window of that version's last save (saves "within a few minutes of each other").

The If-Match save counter grows on every save either way; only the history's numbering coalesces.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class WorkingVersion:
    """The newest history version of a pass document, as far as coalescing cares."""

    author_id: int | None
    last_saved_at: datetime
    document_version: int  # the save counter at its last save
    absorbs_saves: bool


@dataclass(frozen=True)
class IncomingSave:
    author_id: int | None
    at: datetime
    document_version_before: int  # the save counter the save replaces (its If-Match)
    document_was_draft: bool
    plain: bool  # not a revert, an accepted draft or an import


def joins_working_version(working: WorkingVersion | None, save: IncomingSave, *, window: timedelta) -> bool:
    """True when ``save`` replaces the document of ``working`` instead of starting a new version."""
    if working is None or window <= timedelta(0):
        return False
    if not (save.plain and working.absorbs_saves and save.document_was_draft):
        return False
    if save.author_id is None or working.author_id != save.author_id:
        return False
    if working.document_version != save.document_version_before:
        return False
    gap = save.at - working.last_saved_at
    return timedelta(0) <= gap <= window
