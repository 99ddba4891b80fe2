"""Version history of pass documents: every saved state is kept (for diffs and revert)."""

from __future__ import annotations

from typing import Any

from .models import LLMDraft, PassDocument, PassDocumentVersion


def pass_version_record(
    *, doc: PassDocument, actor: Any, source_draft: LLMDraft | None = None, note: str = ""
) -> PassDocumentVersion:
    """Keep the document's current state as its version row. Idempotent per (document, version)."""
    version, _ = PassDocumentVersion.objects.get_or_create(
        pass_document=doc,
        version=doc.version,
        defaults={
            "document": doc.document,
            "document_sha256": doc.document_sha256,
            "saved_by": actor if getattr(actor, "is_authenticated", False) else None,
            "source_draft": source_draft,
            "note": note[:300],
        },
    )
    return version
