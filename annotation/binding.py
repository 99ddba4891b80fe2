"""What a pass approval is bound to (DESIGN §5), written once.

An approval holds for the exact content the reviewer saw: the approved document's hash
(``PassDocument.approved_sha256``) and the parent's content hash (``PassDocument.approved_parent_sha256``),
which is ``parent_content_sha256`` of the problem at the moment of approval. The parent's content is its
statement (``stem``), its question (``query`` and ``raw_question``), its options, and its images' bytes (each
image id, in order, with its SHA-256). A change to any of these gives another hash, so every approval made
on the earlier content is stale: on every page and API that shows freshness, and to the compiler.

The current hash is kept on ``ParentProblem.content_sha256`` (recomputed whenever the parent or one of its
images is saved or deleted), so freshness can be asked in SQL as well (``FRESH_APPROVAL``/``STALE_APPROVAL``
in ``annotation.models``). This module imports no model, so a migration can use it on historical models.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kit.canonical import digest

# The parent's fields an approval is bound to (besides its images).
PARENT_CONTENT_FIELDS = ("raw_question", "stem", "query", "options")
PARENT_CONTENT_SCHEMA = "physalign_parent_content_v1"


def parent_content_digest(
    *, raw_question: str, stem: str, query: str, options: Any, images: Iterable[tuple[str, str]]
) -> str:
    """The digest of a problem's content; ``images`` are ``(image_id, sha256)`` pairs in display order."""
    return digest(
        {
            "schema": PARENT_CONTENT_SCHEMA,
            "raw_question": raw_question or "",
            "stem": stem or "",
            "query": query or "",
            "options": options if options is not None else [],
            "images": [[image_id, sha256] for image_id, sha256 in images],
        }
    )


def parent_content_sha256(parent: Any, *, images: Iterable[tuple[str, str]] | None = None) -> str:
    """The content hash of ``parent`` as it is now: its fields, and its images as stored (read afresh from
    the database unless ``images`` are given; an unsaved parent has none yet)."""
    if images is None:
        images = (
            list(parent.images.order_by("ordinal").values_list("image_id", "sha256"))
            if parent.pk is not None
            else []
        )
    return parent_content_digest(
        raw_question=parent.raw_question,
        stem=parent.stem,
        query=parent.query,
        options=parent.options,
        images=images,
    )


def content_differences(
    parent: Any, fields: dict[str, Any], *, images: Iterable[tuple[str, str]] | None = None
) -> list[str]:
    """The content fields (and ``images``) in which ``fields`` / ``images`` differ from ``parent`` as stored."""
    changed = [
        name for name in PARENT_CONTENT_FIELDS if name in fields and getattr(parent, name) != fields[name]
    ]
    if images is not None:
        stored = list(parent.images.order_by("ordinal").values_list("image_id", "sha256"))
        if stored != [tuple(pair) for pair in images]:
            changed.append("images")
    return changed


# A pass builds on every lower-numbered pass of its parent (Pass 2 on 1, Pass 4 on 1–3, Pass 5 on 1–4); its
# approval is bound to their documents as well, so a change upstream makes every downstream approval stale.
UPSTREAM_SCHEMA = "physalign_pass_upstream_v1"
APPROVAL_UNBOUND_UPSTREAM = (
    "unbound"  # approvals given before the binding existed whose upstream changed since
)


def upstream_digest(pass_no: int, hashes: dict[int, str]) -> str:
    """The digest of what Pass ``pass_no`` builds on: ``hashes`` maps its parent's pass numbers to their
    document hashes; only the lower-numbered ones count (an absent pass counts as absent)."""
    return digest(
        {"schema": UPSTREAM_SCHEMA, "passes": [[k, hashes[k]] for k in sorted(hashes) if k < pass_no]}
    )
