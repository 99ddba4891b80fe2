"""Generated problems half-way through source review, so the staged demo's source reviewer and annotator find
work on their first login (``load_demo --stage``).

The same generator as the demo's approved problems (another seed, so other ids and scenes): Passes 1–2 approved,
bound to their documents' hashes; Passes 3–4 submitted and waiting for the source reviewer; on the last problem
Pass 3 is rejected with the reviewer's note, back with the annotator. Pure Python, no Django import.
"""

from __future__ import annotations

import json
from pathlib import Path

from kit.canonical import write_json_bytes

from .generator import STAGES, GenerationSummary, generate_workspace

REVIEW_WORK_SEED = 2028
REVIEW_WORK_COUNT = 4
APPROVED_STAGES = ("pass1", "pass2")
REJECTION_NOTE = (
    "The query target names the wrong quantity: the question asks about the one drawn on the diagram. "
    "Please bind it again."
)


def write_review_work_workspace(
    out_dir: Path, *, count: int = REVIEW_WORK_COUNT, seed: int = REVIEW_WORK_SEED
) -> GenerationSummary:
    """Write the workspace (a Kit source workspace) and set its review state as the module says."""
    summary = generate_workspace(out_dir, count=count, seed=seed)
    state_path = Path(out_dir) / "reviews" / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    problems = state["problems"]
    last = sorted(problems)[-1] if problems else None
    for pid, entry in problems.items():
        for stage in STAGES:
            if stage in APPROVED_STAGES:
                continue
            if pid == last and stage == "pass3":
                entry["stages"][stage] = {"status": "rejected", "note": REJECTION_NOTE}
            else:
                entry["stages"][stage] = {"status": "submitted"}
    state_path.write_bytes(write_json_bytes(state))
    return summary
