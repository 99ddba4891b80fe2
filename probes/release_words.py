"""A release's export in one sentence (the signoff page's message and ``export_release``), instead of the
counts dict: "Release NREL-a3f2cf12… exported (development, reviewed_data_release): 105 probes from 25
parent problems in pool B (grounding), 44 … in pool L (joint reading), 77 … in pool P (paired +GT)."."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from physalign_site.count_words import counted

POOL_NAMES = {"B": "grounding", "L": "joint reading", "P": "paired +GT"}
# the paper's probe interfaces (§3.1): what each asks of the model
INTERFACE_TASKS = {
    "T02-single": "resolve an anchored mention to an entity (referent)",
    "T03-image": "transcribe an anchored quantity label and select its owner (read, owner)",
    "T03-text": "select the owner of an anchored textual quantity (owner)",
}


def _plural(n: Any, word: str) -> str:
    return counted(n, word) if isinstance(n, int) else f"{n} {word}s"


def pool_rows(counts: dict[str, Any]) -> list[dict[str, Any]]:
    """A release's pools (its manifest counts) as table rows: pool, its name, probes and parent problems."""
    rows = []
    for pool, value in counts.items():
        probes = value.get("probes") if isinstance(value, dict) else value
        parents = value.get("mothers", value.get("parents")) if isinstance(value, dict) else None
        rows.append({"pool": pool, "name": POOL_NAMES.get(pool, ""), "probes": probes, "parents": parents})
    return rows


def release_counts_phrase(counts: dict[str, Any]) -> str:
    parts = []
    for pool, value in counts.items():
        name = f"pool {pool}" + (f" ({POOL_NAMES[pool]})" if pool in POOL_NAMES else "")
        if isinstance(value, dict) and "probes" in value:
            parents = value.get("mothers", value.get("parents"))
            origin = f" from {_plural(parents, 'parent problem')}" if parents is not None else ""
            parts.append(f"{_plural(value['probes'], 'probe')}{origin} in {name}")
        else:
            parts.append(f"{value} in {name}")
    if not parts:
        return "no probes"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def release_export_sentence(release: Any) -> str:
    """Plain text, for the command line; it begins with the release id, so scripts can take the first word."""
    return (
        f"{release.release_id} exported ({release.split}, {release.artifact_mode}): "
        f"{release_counts_phrase(release.counts or {})}."
    )


def release_export_message(release: Any) -> SafeString:
    """HTML for a flash message: the release id links to the release's page."""
    short = release.release_id if len(release.release_id) <= 24 else release.release_id[:20] + "…"
    return format_html(
        'Release <a href="{}" title="{}"><code>{}</code></a> exported ({}, {}): {}.',
        reverse("probes:release_detail", args=[release.release_id]),
        release.release_id,
        short,
        release.split,
        release.artifact_mode,
        release_counts_phrase(release.counts or {}),
    )
