"""Item scoring: output states (Kit §5.2) and field-independent C/G/J (Kit §5.3). Pure.

``key`` is a probe's private mapping (``ProbeKey.key``): ``candidate_map`` (alias → {"id", …}),
``gold_targets`` ([{"id", …}]), ``read_targets`` ([{"anchor_alias", "normalizer_id", "expected"}]),
``response_contract`` ({"binding_key", "cardinality", "read_shape", "read_anchor_ids"}).
G is the paper's grounding score (the kit's binding B). C exists only for raw probes with reads
(pool L); J = C·G wherever C exists, and is never taken from outside.

A completed response whose text is not a string (a list, a number, a dict, or null from a provider) is
``unparseable``, scored like any malformed output (G = 0, C = 0 where it applies); the Kit raises
``TypeError`` on such input instead (``_parse_response``). Only ``infra_missing`` means "no response":
``score(None, …)`` without a ``ModelResponse`` is that shorthand.

Every score carries its ``reasons``: C, G and J each with the rule that decided it, in words, written where
the rule is applied (so the drill-down shows what the scorer did, never a recomputation). Candidates are
named by the label the model saw (``E2``) with the entity it stands for; entity ids are shortened to their
first eight hex digits when that still tells the probe's candidates apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from kit.normalizers import LABEL, LITERAL, UnsupportedGoldReading, normalize
from kit.private_key import ProbeKeyView
from llm.types import OutputStatus

from .parsing import kind_of, parse_failure, parse_response

CONDITIONS = ("raw", "gold", "no_image", "reordered")
CONDITION_NAMES = {
    "raw": "raw (Base)",
    "gold": "gold (+GT)",
    "no_image": "no_image (no attachment)",
    "reordered": "reordered (candidates permuted)",
}
READ_FIELD = "read"
NORMALIZER_NAMES = {LABEL: "label normalizer", LITERAL: "literal normalizer"}
_SHORT_ID = 11  # "PE-" and eight hex digits
_NOT_SERVED = "no response was served (infrastructure missing); it counts as missing, never as wrong"


@dataclass(frozen=True)
class ModelResponse:
    """What the provider layer returned: its status (completed, refusal, truncated, or
    infra_missing/failed when nothing was served) and the raw final output string."""

    text: str | None
    status: str = OutputStatus.COMPLETED


@dataclass(frozen=True)
class Reasons:
    """The rule that decided each score, in words ("C = 1: …", "G = 0: …", "not scored: …")."""

    C: str
    G: str
    J: str


@dataclass(frozen=True)
class ReadCheck:
    """One read target against the answer: the expected and the parsed reading, each as written and as the
    target's normalizer reads it (None: absent or not a supported reading)."""

    anchor: str
    normalizer: str
    expected: str
    expected_normalized: str
    parsed: Any
    parsed_normalized: str | None
    correct: bool


@dataclass(frozen=True)
class ItemScore:
    status: str
    C: int | None
    G: int | None
    object_valid: bool = False
    field_valid: dict[str, bool] = field(default_factory=dict)
    canonical: tuple[str, ...] | None = None
    set_f1: float | None = None
    # the explanation: not part of the score, so never compared
    reasons: Reasons | None = field(default=None, compare=False)
    chosen: tuple[str, ...] | None = field(default=None, compare=False)  # valid labels, as answered
    reads: tuple[ReadCheck, ...] = field(default=(), compare=False)

    @property
    def J(self) -> int | None:
        return None if self.C is None or self.G is None else self.C * self.G


def recognition_applies(key: dict[str, Any], condition: str) -> bool:
    return condition == "raw" and bool(key.get("read_targets"))


def score(response: ModelResponse | str | None, key: dict[str, Any], condition: str) -> ItemScore:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}")
    if not isinstance(response, ModelResponse):
        response = ModelResponse(
            text=response,
            status=OutputStatus.COMPLETED if response is not None else OutputStatus.INFRA_MISSING,
        )
    joint = recognition_applies(key, condition)
    not_joint = None if joint else _c_not_scored(key, condition)
    if response.status in (OutputStatus.INFRA_MISSING, OutputStatus.FAILED):
        missing = f"not scored: {_NOT_SERVED}"
        return ItemScore(
            status=OutputStatus.INFRA_MISSING, C=None, G=None, reasons=Reasons(missing, missing, missing)
        )
    if response.status in (OutputStatus.REFUSAL, OutputStatus.TRUNCATED):
        # a refused or budget-truncated output fails every field, even if its tail is valid JSON
        why = (
            "the model refused"
            if response.status == OutputStatus.REFUSAL
            else "the output was cut off at the token limit (truncated)"
        )
        return _failed(response.status, why, joint, not_joint)
    obj = parse_response(response.text)
    if obj is None:
        why = "the output did not parse: " + (
            parse_failure(response.text) or "it is not exactly one JSON object"
        )
        return _failed(OutputStatus.UNPARSEABLE, why, joint, not_joint)
    valid: dict[str, bool] = {}
    G, canonical, set_f1, chosen, g_reason = _binding(obj, key, valid)
    reads: tuple[ReadCheck, ...] = ()
    if joint:
        C, reads, c_reason = _recognition(obj, key, valid)
    else:
        C, c_reason = None, cast(str, not_joint)
        if key.get("read_targets"):
            # the Kit reports a read field's validity under every condition, C only where it applies
            valid[READ_FIELD] = _read_valid(obj, key)
    return ItemScore(
        status=OutputStatus.COMPLETED,
        C=C,
        G=G,
        object_valid=True,
        field_valid=valid,
        canonical=canonical,
        set_f1=set_f1,
        reasons=Reasons(C=c_reason, G=g_reason, J=_joint_reason(C, G)),
        chosen=chosen,
        reads=reads,
    )


def _failed(status: str, why: str, joint: bool, not_joint: str | None) -> ItemScore:
    """An output that fails every field: G = 0, C = 0 where C applies."""
    every = f"{why}; such an output fails every field"
    C = 0 if joint else None
    return ItemScore(
        status=status,
        C=C,
        G=0,
        reasons=Reasons(
            C=f"C = 0: {every}" if joint else cast(str, not_joint),
            G=f"G = 0: {every}",
            J=_joint_reason(C, 0),
        ),
    )


def _c_not_scored(key: dict[str, Any], condition: str) -> str:
    if condition != "raw":
        return (
            "not scored: C is scored only under the raw (Base) condition; "
            f"this request is {CONDITION_NAMES[condition]}"
        )
    return "not scored: this probe has no reading target (C exists only on the joint set L)"


def _joint_reason(C: int | None, G: int | None) -> str:
    if G is None:
        return f"not scored: {_NOT_SERVED}"
    if C is None:
        return "not scored: J = C × G exists only where C does"
    words = {
        (1, 1): "the reading and the grounding are both correct",
        (1, 0): "the reading is correct but the grounding is wrong",
        (0, 1): "the grounding is correct but the reading is wrong",
        (0, 0): "neither the reading nor the grounding is correct",
    }[(C, G)]
    return f"J = {C * G}: C × G = {C} × {G}; {words}"


def _entity_texts(private: ProbeKeyView) -> dict[str, str]:
    """Each entity id as the explanations name it: shortened when the short forms stay distinct."""
    ids = set(private.alias_to_entity.values()) | set(private.gold_entity_ids)
    short = {entity: entity[:_SHORT_ID] for entity in ids}
    if len(set(short.values())) < len(ids):
        short = {entity: entity for entity in ids}
    return {entity: f"entity {text}" for entity, text in short.items()}


def _candidates_text(aliases: list[str], domain: dict[str, str], entities: dict[str, str]) -> str:
    return ", ".join(f"{a} ({entities[domain[a]]})" for a in aliases) or "no candidate"


def _binding(
    obj: dict[str, Any], key: dict[str, Any], valid: dict[str, bool]
) -> tuple[int, tuple[str, ...] | None, float | None, tuple[str, ...] | None, str]:
    private = ProbeKeyView(key)
    name = private.binding_key
    domain = private.alias_to_entity
    gold = private.gold_entity_ids
    is_set = private.response_contract.get("cardinality", "one") == "set"
    value = obj.get(name)
    aliases = value if is_set and isinstance(value, list) else [value]
    ok = isinstance(value, list) if is_set else isinstance(value, str)
    ok = ok and all(isinstance(a, str) and a.strip() in domain for a in aliases)
    valid[name] = ok
    entities = _entity_texts(private)
    gold_aliases = private.gold_aliases
    expected = _candidates_text(gold_aliases, domain, entities) if gold_aliases else ""
    expected = expected or ", ".join(entities[g] for g in gold)
    if is_set:
        expected = f"exactly {expected}"
    if not ok:
        return (
            0,
            None,
            (0.0 if is_set else None),
            None,
            f"G = 0: {_invalid_binding(obj, name, value, is_set, domain)}; expected {expected}",
        )
    chosen = tuple(cast(str, a).strip() for a in aliases)  # all strings: checked in ok
    canonical = [domain[a] for a in chosen]
    said = _candidates_text(list(chosen), domain, entities)
    if is_set:
        predicted = set(canonical)
        f1 = 2 * len(predicted & set(gold)) / (len(predicted) + len(gold))
        G = int(predicted == set(gold))
        reason = (
            f"G = 1: chose {said}, exactly the expected set"
            if G
            else f"G = 0: chose {said}, expected {expected} (set F1 {f1:.2f})"
        )
        return G, tuple(sorted(predicted)), f1, chosen, reason
    G = int(canonical == gold)
    reason = f"G = 1: chose {said}, the expected target" if G else f"G = 0: chose {said}, expected {expected}"
    return G, tuple(canonical), None, chosen, reason


def _invalid_binding(obj: dict[str, Any], name: str, value: Any, is_set: bool, domain: dict[str, str]) -> str:
    if name not in obj:
        return f'the answer has no "{name}" field'
    if is_set and not isinstance(value, list):
        return f'"{name}" is {kind_of(value)}, not a list of candidate labels'
    if not is_set and not isinstance(value, str):
        return f'"{name}" is {kind_of(value)}, not one candidate label'
    items = value if is_set else [value]
    bad = next(a for a in items if not (isinstance(a, str) and a.strip() in domain))
    if not isinstance(bad, str):
        return f'"{name}" holds {kind_of(bad)}, not only candidate labels'
    return f'"{bad}" is not a candidate label (the candidates are {", ".join(sorted(domain))})'


def _normalizer_text(profile: str) -> str:
    return f"the {NORMALIZER_NAMES.get(profile, profile)} ({profile})"


def _reading_text(value: str, normalized: str) -> str:
    return f'"{value}"' if value == normalized else f'"{value}" (normalized "{normalized}")'


def _recognition(
    obj: dict[str, Any], key: dict[str, Any], valid: dict[str, bool]
) -> tuple[int, tuple[ReadCheck, ...], str]:
    private = ProbeKeyView(key)
    targets = private.read_targets
    # The contract's read shape decides (Kit names: "string" | "object_by_anchor"); several targets are always
    # an object keyed by anchor.
    multi = len(targets) > 1 or private.read_shape == "object_by_anchor"
    value = obj.get(READ_FIELD)
    checks: list[ReadCheck] = []
    if multi:
        required = {t["anchor_alias"] for t in targets}
        if not isinstance(value, dict) or set(value) != required:
            valid[READ_FIELD] = False
            for target in targets:
                profile = target.get("normalizer_id") or LABEL
                predicted = value.get(target["anchor_alias"]) if isinstance(value, dict) else None
                checks.append(
                    _check(target, profile, predicted, _normalized_or_none(target["expected"], profile))
                )
            return 0, tuple(checks), f"C = 0: {_invalid_read_object(obj, value, sorted(required))}"
        predictions = [value[t["anchor_alias"]] for t in targets]
    else:
        predictions = [value]
    correct = True
    for target, predicted in zip(targets, predictions, strict=True):
        profile = target.get("normalizer_id") or LABEL
        expected = normalize(target["expected"], profile)
        if expected is None:
            raise UnsupportedGoldReading(f"gold reading at {target['anchor_alias']} is unsupported")
        got = normalize(predicted, profile)
        correct = correct and got is not None and got == expected
        checks.append(_check(target, profile, predicted, expected))
    valid[READ_FIELD] = _read_valid(obj, key)  # one rule, also where C is not scored
    C = int(correct)
    if multi:
        clauses = "; ".join(f"at {c.anchor} {_read_clause(c, obj, nested=True)}" for c in checks)
    else:
        clauses = _read_clause(checks[0], obj, nested=False)
    return C, tuple(checks), f"C = {C}: {clauses}"


def _read_valid(obj: dict[str, Any], key: dict[str, Any]) -> bool:
    """Whether the answer's read field is a supported reading at every anchor (the Kit's ``field_valid`` of a
    read: the value normalizes under the target's normalizer; several anchors need an object keyed by exactly
    those anchors), whatever the expected reading is."""
    private = ProbeKeyView(key)
    targets = private.read_targets
    value = obj.get(READ_FIELD)
    if len(targets) > 1 or private.read_shape == "object_by_anchor":
        if not isinstance(value, dict) or set(value) != {t["anchor_alias"] for t in targets}:
            return False
        predictions = [value[t["anchor_alias"]] for t in targets]
    else:
        predictions = [value]
    return all(
        _normalized_or_none(predicted, target.get("normalizer_id") or LABEL) is not None
        for target, predicted in zip(targets, predictions, strict=True)
    )


def _normalized_or_none(value: Any, profile: str) -> str | None:
    """For an explanation only: an unknown normalizer names nothing instead of raising where C is already 0."""
    try:
        return normalize(value, profile)
    except ValueError:
        return None


def _check(target: Mapping[str, Any], profile: str, predicted: Any, expected: str | None) -> ReadCheck:
    got = _normalized_or_none(predicted, profile) if isinstance(predicted, str) else None
    return ReadCheck(
        anchor=str(target["anchor_alias"]),
        normalizer=profile,
        expected=str(target["expected"]),
        expected_normalized=expected or "",
        parsed=predicted,
        parsed_normalized=got,
        correct=got is not None and got == expected,
    )


def _read_clause(check: ReadCheck, obj: dict[str, Any], *, nested: bool) -> str:
    under = _normalizer_text(check.normalizer)
    wanted = _reading_text(check.expected, check.expected_normalized)
    if check.parsed is None and not nested and READ_FIELD not in obj:
        return f'the answer has no "{READ_FIELD}" field; expected {wanted}'
    if not isinstance(check.parsed, str):
        return f"the parsed reading is {kind_of(check.parsed)}, not text; expected {wanted}"
    if check.parsed_normalized is None:
        return (
            f'the parsed reading "{check.parsed}" is not a supported reading under {under}; expected {wanted}'
        )
    said = _reading_text(check.parsed, check.parsed_normalized)
    verb = "matches" if check.correct else "does not match"
    return f"the parsed reading {said} {verb} the expected {wanted} under {under}"


def _invalid_read_object(obj: dict[str, Any], value: Any, required: list[str]) -> str:
    anchors = ", ".join(required)
    if READ_FIELD not in obj:
        return f'the answer has no "{READ_FIELD}" field; expected an object keyed by the anchors {anchors}'
    if not isinstance(value, dict):
        return f'"{READ_FIELD}" is {kind_of(value)}, not an object keyed by the anchors {anchors}'
    missing = [a for a in required if a not in value]
    extra = sorted(a for a in value if a not in required)
    parts = [f"{', '.join(missing)} missing"] if missing else []
    parts += [f"{', '.join(extra)} not asked for"] if extra else []
    return f'"{READ_FIELD}" must have exactly the anchors {anchors}; {" and ".join(parts)}'
