"""Version history of pass documents: the states kept for diffs and revert, autosaves coalesced.

``pass_version_record`` keeps the document's current state as a new version that takes no later saves (an
import, a revert, an accepted draft); ``pass_version_save`` is a workspace or API save, which may join the
author's working version (``annotation.coalescing``). Both run under the caller's lock on the pass document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from .coalescing import IncomingSave, WorkingVersion, joins_working_version
from .models import LLMDraft, PassDocument, PassDocumentVersion


@dataclass(frozen=True)
class VersionSaved:
    row: PassDocumentVersion
    coalesced: bool  # True: the save replaced the working version's document; False: a new version


def coalesce_window() -> timedelta:
    return timedelta(minutes=max(0, int(settings.PHYSALIGN_VERSION_COALESCE_MINUTES)))


def _author_id(actor: Any) -> int | None:
    return actor.pk if getattr(actor, "is_authenticated", False) else None


def _newest(doc: PassDocument) -> PassDocumentVersion | None:
    return PassDocumentVersion.objects.filter(pass_document=doc).order_by("-version").first()


def _new_version(
    doc: PassDocument,
    newest: PassDocumentVersion | None,
    *,
    actor: Any,
    at: datetime,
    absorbs_saves: bool,
    source_draft: LLMDraft | None,
    note: str,
) -> PassDocumentVersion:
    row = PassDocumentVersion.objects.create(
        pass_document=doc,
        version=newest.version + 1 if newest is not None else 1,
        document=doc.document,
        document_sha256=doc.document_sha256,
        document_version=doc.version,
        saved_by_id=_author_id(actor),
        saved_at=at,
        last_saved_at=at,
        absorbs_saves=absorbs_saves,
        source_draft=source_draft,
        note=note[:300],
    )
    # an update, not doc.save(): keeping the number is no edit of the document (updated_at, upstream digests)
    PassDocument.objects.filter(pk=doc.pk).update(history_version=row.version)
    doc.history_version = row.version
    return row


def pass_version_record(
    *, doc: PassDocument, actor: Any, source_draft: LLMDraft | None = None, note: str = ""
) -> PassDocumentVersion:
    """Keep the document's current state as a new version that later saves never join. Idempotent per save
    counter: a state already kept is returned as it is."""
    newest = _newest(doc)
    if newest is not None and newest.document_version == doc.version:
        return newest
    return _new_version(
        doc, newest, actor=actor, at=timezone.now(), absorbs_saves=False, source_draft=source_draft, note=note
    )


def pass_version_save(
    *,
    doc: PassDocument,
    actor: Any,
    document_version_before: int,
    document_was_draft: bool,
    source_draft: LLMDraft | None = None,
    note: str = "",
) -> VersionSaved:
    """Keep a save of ``doc`` (already stored, its save counter already moved on from
    ``document_version_before``): it replaces the author's working version within the window, or starts one."""
    now = timezone.now()
    newest = _newest(doc)
    working = (
        WorkingVersion(
            author_id=newest.saved_by_id,
            last_saved_at=newest.last_saved_at,
            document_version=newest.document_version,
            absorbs_saves=newest.absorbs_saves,
        )
        if newest is not None
        else None
    )
    plain = source_draft is None and not note
    incoming = IncomingSave(
        author_id=_author_id(actor),
        at=now,
        document_version_before=document_version_before,
        document_was_draft=document_was_draft,
        plain=plain,
    )
    if newest is not None and joins_working_version(working, incoming, window=coalesce_window()):
        newest.document = doc.document
        newest.document_sha256 = doc.document_sha256
        newest.document_version = doc.version
        newest.last_saved_at = now
        newest.save_count += 1
        newest.save(
            update_fields=["document", "document_sha256", "document_version", "last_saved_at", "save_count"]
        )
        return VersionSaved(row=newest, coalesced=True)
    row = _new_version(
        doc, newest, actor=actor, at=now, absorbs_saves=plain, source_draft=source_draft, note=note
    )
    return VersionSaved(row=row, coalesced=False)
