"""Versioned drafting prompts: one per pass, asking for the Kit pass JSON (Kit §2.4).

What a drafting model sees: the problem's statement, question, options and images (in order) —
never the answer or the solution (paper §3.2, Kit §3.7). Passes 2–5 also get the current earlier
pass documents. Pass 5 (solution-step alignment, analysis only) alone also gets the solution,
since aligning solution steps is its whole task. Changing any wording here means a new version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kit.passes.validator import PASS_LAYOUTS, RECORD_SPECS, SCHEMA_VERSION

PROMPT_VERSIONS: dict[int, str] = {
    1: "draft-p1-v1",
    2: "draft-p2-v1",
    3: "draft-p3-v1",
    4: "draft-p4-v1",
    5: "draft-p5-v1",
}

SYSTEM = (
    "You are a careful annotator of physics diagram problems. You produce one pass of a structured "
    "annotation (PhysGraph G_obs) as a single JSON object, exactly in the requested format. Describe only "
    "what is observable in the images and the text; do not solve the problem and do not state any answer. "
    "Use contiguous IDs with the given prefixes (v001, p001, m001, q001, b001, r001, c001, u001), keep IDs "
    "stable across passes, coordinates as integers 0–1000 relative to each image (bbox_1000 = "
    "[x_min, y_min, x_max, y_max]), confidence high|medium|low, provenance a non-empty subset of "
    '["IMAGE", "TEXT"]. Never use the keys answer, answers, correct_answer, final_answer, reasoning, '
    "solution or standard_solution (except Pass 5's top-level final_answer). Return only the JSON object, "
    "without explanation or code fences."
)

TASKS: dict[int, str] = {
    1: (
        "Pass 1 — visual primitives. List every visual element of the images as visual_nodes: labels and "
        "printed text (type text_glyph, with the visible text exactly as printed in 'text'), points, line "
        "segments, arrows, circles, arcs, angle marks, regions, axes, graph curves, object shapes, component "
        "and field symbols. Types: text_glyph, point_mark, line_segment, polyline, curve, circle, arc, arrow, "
        "angle_mark, region, axis, graph_curve, object_shape, component_symbol, field_symbol, unknown_visual. "
        "Give each node its image_id and bbox_1000; keypoints_1000 may be []; center_1000 [-1,-1] and "
        "radius_1000 -1 when absent. Record anything you cannot decide in ambiguities."
    ),
    2: (
        "Pass 2 — visual to physical binding. From the Pass 1 visual nodes, create physical_nodes (bodies, "
        'surfaces, forces, fields, circuit parts, points, …) with provenance exactly ["IMAGE"] and at least '
        "one visual_anchor_ids entry, and bindings of type labels or represents (visual → physical) or "
        "same_entity_as (physical ↔ physical)."
    ),
    3: (
        "Pass 3 — text grounding. Quote text_mentions from the statement (section stem) and the question "
        "(section query) in textual order, with the exact quote and its occurrence number; ground quantities "
        '(owner_id = the physical node that directly owns the quantity, "" when unresolved), constraints, '
        "refers_to bindings (mention → physical) and the query_target (its mention has section query and "
        "role query_target). New physical nodes continue the Pass 2 numbering."
    ),
    4: (
        "Pass 4 — the consolidated Observed-PhysGraph. Copy the Pass 1 visual nodes unchanged (duplicates may "
        "be dropped, none added), merge the physical nodes of Passes 2 and 3, keep mentions, quantities, "
        "bindings and constraints, add relations (predicate, subject_id, object_id, optional quantity_id) and "
        "choose the domain (mechanics, electromagnetism or mixed)."
    ),
    5: (
        "Pass 5 — solution-step alignment (analysis only; never used as truth). Split the solution into "
        "solution_steps (step_id s001…, step_type read_given|select_law|define_variable|form_equation|derive|"
        "calculate|case_analysis|check|conclude) and list the Pass 4 node, quantity, relation and constraint "
        "IDs each step uses; put the solution's final result in final_answer."
    ),
}


@dataclass(frozen=True)
class PromptImage:
    image_id: str
    width: int
    height: int
    media_type: str
    data: bytes


@dataclass(frozen=True)
class DraftPrompt:
    version: str
    system: str
    user: str
    images: tuple[PromptImage, ...]


def skeleton(pass_no: int, problem_id: str) -> dict[str, Any]:
    layout = PASS_LAYOUTS[pass_no]
    document: dict[str, Any] = {}
    for name in layout.scalars:
        document[name] = {
            "problem_id": problem_id,
            "schema_version": SCHEMA_VERSION,
            "domain": "mechanics",
        }.get(name, "")
    for collection in layout.collections:
        document[collection.key] = []
    if layout.has_query_target:
        document["query_target"] = {
            key: ([] if key.endswith("_ids") else "") for key in sorted(RECORD_SPECS["query_target"].keys)
        }
    return document


def _record_keys(pass_no: int) -> str:
    layout = PASS_LAYOUTS[pass_no]
    lines = [f"- {c.key}[]: {{{', '.join(sorted(RECORD_SPECS[c.record].keys))}}}" for c in layout.collections]
    if layout.has_query_target:
        lines.append(f"- query_target: {{{', '.join(sorted(RECORD_SPECS['query_target'].keys))}}}")
    return "\n".join(lines)


def build_draft_prompt(
    *,
    pass_no: int,
    problem_id: str,
    stem: str,
    query: str,
    options: list[dict[str, Any]],
    images: list[PromptImage],
    earlier_passes: dict[int, Any],
    solution: str | None = None,
) -> DraftPrompt:
    """The messages for drafting ``pass_no``. ``solution`` is accepted for Pass 5 only."""
    if pass_no not in PROMPT_VERSIONS:
        raise ValueError(f"no drafting prompt for pass {pass_no}")
    if solution is not None and pass_no != 5:
        raise ValueError("only Pass 5 may see the solution")
    sections = [
        ("[Problem ID]", problem_id),
        ("[Original statement]", stem),
        ("[Original question]", query),
        ("[Original answer options]", json.dumps(options or [], ensure_ascii=False)),
        (
            "[Images]",
            "\n".join(
                f"{image.image_id}: {image.width}x{image.height} pixels, attached in this order"
                for image in images
            )
            or "None.",
        ),
    ]
    if pass_no > 1:
        earlier = []
        for number in range(1, pass_no):
            document = earlier_passes.get(number)
            body = (
                json.dumps(document, ensure_ascii=False, sort_keys=True)
                if document is not None
                else "None yet."
            )
            earlier.append(f"Pass {number}: {body}")
        sections.append(("[Current earlier passes]", "\n".join(earlier)))
    if pass_no == 5:
        sections.append(("[Solution]", solution or ""))
    sections.append(("[Task]", TASKS[pass_no]))
    sections.append(("[Record keys]", _record_keys(pass_no)))
    sections.append(("[Output format]", json.dumps(skeleton(pass_no, problem_id), ensure_ascii=False)))
    user = "\n".join(f"{header}\n{content}" for header, content in sections)
    return DraftPrompt(version=PROMPT_VERSIONS[pass_no], system=SYSTEM, user=user, images=tuple(images))
