"""Edit a Kit source workspace as a team would between the Kit and the app."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit.canonical import digest, write_json_bytes


def rewrite_pass(ws: Path, pid: str, pass_no: int, change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """Edit a pass document and credit its approval to the new hash (``reviews/state.json``)."""
    path = ws / "passes" / f"pass{pass_no}" / f"{pid}.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_bytes(write_json_bytes(document))
    state_path = ws / "reviews" / "state.json"
    state = json.loads(state_path.read_text())
    state["problems"][pid]["stages"][f"pass{pass_no}"]["document_sha256"] = digest(document)
    state_path.write_bytes(write_json_bytes(state))
    return document
