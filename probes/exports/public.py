"""The public part of a release folder as read by every export: its QA records and image bytes (Django-free)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.canonical import bytes_digest

CONDITIONS = ("raw", "gold")


@dataclass(frozen=True)
class PublicPart:
    root: Path  # the release folder
    manifest: dict[str, Any]  # release.json
    records: dict[str, list[dict[str, Any]]]  # condition -> public QA records, in file order

    def image_bytes(self, attachment: dict[str, Any]) -> bytes:
        """An attachment's bytes from ``public/``, checked against the hash its record names."""
        data = (self.root / "public" / attachment["path"]).read_bytes()
        if bytes_digest(data) != attachment["sha256"]:
            raise ValueError(f"public image changed: {attachment['path']}")
        return data


def read_public(root: Path) -> PublicPart:
    records = {}
    for condition in CONDITIONS:
        path = root / "public" / f"qa_{condition}.json"
        records[condition] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    manifest = json.loads((root / "release.json").read_text(encoding="utf-8"))
    return PublicPart(root=root, manifest=manifest, records=records)
