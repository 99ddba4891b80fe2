"""The drill-down of one evaluation request: the expected target beside the parsed answer, every candidate by
the label the model saw, and C, G, J with the reasons the scorer itself gave.

Private: it reads the probe's key (through ``ProbeKey.view``) and the private candidate types; only the admin
drill-down page (``can_run_evaluations``) calls it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .models import EvalRequest
from .parsing import parse_response
from .runs.scores import scoring_result
from .scoring import NORMALIZER_NAMES, Reasons

# A value is typeset whole when it is TeX or a bare symbol (m, m_{1}, v_0, \theta, T'), mixed when it carries
# its own $…$ / \(…\) delimiters; plain text otherwise ("2 kg", "v/(m/s)" read better as written).
_SYMBOL = re.compile(r"^[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?'*$")
_TEX_MARKUP = re.compile(r"\\[A-Za-z]|[_^{}]")


def tex_attribute(value: Any) -> str:
    """The math.js marker for a listed value: ``data-tex``, ``data-tex-mixed`` or "" (plain text)."""
    if not isinstance(value, str) or not value.strip():
        return ""
    text = value.strip()
    if "$" in text or "\\(" in text:
        return "data-tex-mixed"
    if _SYMBOL.match(text) or _TEX_MARKUP.search(text):
        return "data-tex"
    return ""


@dataclass(frozen=True)
class CandidateRow:
    label: str  # as the model saw it
    entity: str
    entity_type: str
    expected: bool
    chosen: bool


@dataclass(frozen=True)
class ReadRow:
    anchor: str
    normalizer: str
    normalizer_name: str
    expected: str
    expected_normalized: str
    expected_tex: str
    parsed: str  # the answer's value as written ("" when absent), JSON for a non-string
    parsed_present: bool
    parsed_normalized: str | None
    parsed_tex: str
    correct: bool | None  # None: C is not scored for this request


@dataclass(frozen=True)
class Drilldown:
    binding_key: str
    candidates: list[CandidateRow]
    expected: list[CandidateRow]
    chosen: list[CandidateRow]
    answered: str  # the binding field as answered, when it names no candidate ("" when it does or is absent)
    reads: list[ReadRow]
    supplied: list[dict[str, Any]]  # the +GT reading packet the model was given (gold condition)
    parsed_json: str | None
    reasons: Reasons
    C: int | None
    G: int | None
    J: int | None
    matches_stored: bool  # the stored ItemScore agrees with this scoring of the stored output


def request_drilldown(row: EvalRequest) -> Drilldown | None:
    """None when the probe has no private key (nothing to explain against)."""
    if not hasattr(row.probe, "key"):
        return None
    key = row.probe.key.view
    result = scoring_result(row)
    reasons = result.reasons
    assert reasons is not None  # the scorer always explains itself
    types = (row.probe.metadata or {}).get("candidate_native_types_PRIVATE", {})
    gold = set(key.gold_entity_ids)
    chosen = set(result.chosen or ())
    candidates = [
        CandidateRow(
            label=alias,
            entity=entity,
            entity_type=str(types.get(alias, "")),
            expected=entity in gold,
            chosen=alias in chosen,
        )
        for alias, entity in sorted(key.alias_to_entity.items())
    ]
    obj = parse_response(row.raw_output) if row.raw_output is not None else None
    answered = ""
    if obj is not None and result.chosen is None and key.binding_key in obj:
        answered = json.dumps(obj[key.binding_key], ensure_ascii=False)
    stored = getattr(row, "score", None)
    matches = stored is None or (stored.C, stored.G, stored.J) == (result.C, result.G, result.J)
    return Drilldown(
        binding_key=key.binding_key,
        candidates=candidates,
        expected=[c for c in candidates if c.expected],
        chosen=[c for c in candidates if c.chosen],
        answered=answered,
        reads=_reads(result, key.read_targets, obj),
        supplied=list(row.probe.gold_view.get("recognition_packet", [])) if row.condition == "gold" else [],
        parsed_json=None if obj is None else json.dumps(obj, ensure_ascii=False, indent=1),
        reasons=reasons,
        C=result.C,
        G=result.G,
        J=result.J,
        matches_stored=matches,
    )


def _reads(result: Any, targets: list[Any], obj: dict[str, Any] | None) -> list[ReadRow]:
    """One row per read target: from the scorer's own checks where C was scored, else the answer's value
    beside the expected reading (not scored)."""
    rows = []
    checks = {c.anchor: c for c in result.reads}
    value = obj.get("read") if obj is not None else None
    for target in targets:
        anchor = str(target["anchor_alias"])
        profile = str(target.get("normalizer_id") or "")
        check = checks.get(anchor)
        if check is not None:
            profile, parsed, normalized, correct = (
                check.normalizer,
                check.parsed,
                check.parsed_normalized,
                check.correct,
            )
            present, expected_normalized = parsed is not None, check.expected_normalized
        else:
            parsed = value.get(anchor) if isinstance(value, dict) else value
            present, normalized, correct, expected_normalized = parsed is not None, None, None, ""
        shown = parsed if isinstance(parsed, str) else ("" if parsed is None else json.dumps(parsed))
        rows.append(
            ReadRow(
                anchor=anchor,
                normalizer=profile,
                normalizer_name=NORMALIZER_NAMES.get(profile, profile),
                expected=str(target["expected"]),
                expected_normalized=expected_normalized,
                expected_tex=tex_attribute(target["expected"]),
                parsed=shown,
                parsed_present=present,
                parsed_normalized=normalized,
                parsed_tex=tex_attribute(parsed),
                correct=correct,
            )
        )
    return rows
