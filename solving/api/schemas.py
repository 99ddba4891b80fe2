"""The JSON schemas of what a solve run stores as JSON: the debate's settings, a turn's record, the manifest."""

from __future__ import annotations

from typing import Any

from physalign_site.api import JSON_MAP, JSON_VALUE_REF, run_manifest_schema

from ..runs.create import BOOLEAN_SETTINGS, INTEGER_SETTINGS, OCR_MODES, REL_TOL_MAX, SETTING_FIELDS

DEBATE_SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The ablation switches (Debate §3, Table 1); an omitted one takes the solver's default, an "
    "unknown one is refused.",
    "properties": {
        **{key: {"type": "boolean"} for key in BOOLEAN_SETTINGS},
        **{
            key: {"type": "integer", "minimum": low, "maximum": high}
            for key, (low, high) in INTEGER_SETTINGS.items()
        },
        "rel_tol": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": REL_TOL_MAX},
        "ocr": {"type": "string", "enum": list(OCR_MODES)},
        "default_solver": {"type": "string", "description": "One of the solvers (default: the first)."},
    },
    "additionalProperties": False,
}
assert set(DEBATE_SETTINGS_SCHEMA["properties"]) == set(SETTING_FIELDS)  # the schema names every setting


STRING = {"type": "string"}
TURN_RECORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "nullable": True,
    "description": "The turn's record as stored: how the call ended, then by stage the solver's answer and its "
    "canonical form, the pruner's label, the selector's choice, a front-end step's detail; a decision turn "
    "(vote, groups) keeps its own keys",
    "properties": {
        "finish_reason": STRING,
        "attempts": {"type": "integer"},
        "error": STRING,
        "answer": STRING,
        "answer_source": STRING,
        "peers": {"type": "array", "items": STRING},
        "canonical_kind": STRING,
        "canonical": STRING,
        "label": STRING,
        "kept": {"type": "boolean"},
        "chosen": {"type": "string", "nullable": True, "description": "The solver picked (null: abstained)"},
        "step": STRING,
        "detail": {"description": "The front-end step's detail", "allOf": [JSON_VALUE_REF]},
    },
    "additionalProperties": JSON_VALUE_REF,
}
SOLVE_MANIFEST_SCHEMA = run_manifest_schema(
    "What the run was planned from: code revision, package versions, parent and prompt hashes, the model",
    kind={"type": "string", "description": "single | debate"},
    parent_ids_sha256={"type": "string"},
    answer_types={"type": "object", "additionalProperties": {"type": "integer"}},
    prompt={
        "type": "object",
        "properties": {"version": {"type": "string"}, "template_sha256": {"type": "string"}},
    },
    model={**JSON_MAP, "nullable": True, "description": "The model's request settings (a single solver)"},
)
