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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from kit.normalizers import LABEL, UnsupportedGoldReading, normalize
from kit.private_key import ProbeKeyView
from llm.types import OutputStatus

from .parsing import parse_response

CONDITIONS = ("raw", "gold", "no_image", "reordered")
READ_FIELD = "read"


@dataclass(frozen=True)
class ModelResponse:
    """What the provider layer returned: its status (completed, refusal, truncated, or
    infra_missing/failed when nothing was served) and the raw final output string."""

    text: str | None
    status: str = OutputStatus.COMPLETED


@dataclass(frozen=True)
class ItemScore:
    status: str
    C: int | None
    G: int | None
    object_valid: bool = False
    field_valid: dict[str, bool] = field(default_factory=dict)
    canonical: tuple[str, ...] | None = None
    set_f1: float | None = None

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
    if response.status in (OutputStatus.INFRA_MISSING, OutputStatus.FAILED):
        return ItemScore(status=OutputStatus.INFRA_MISSING, C=None, G=None)
    if response.status in (OutputStatus.REFUSAL, OutputStatus.TRUNCATED):
        # a refused or budget-truncated output fails every field, even if its tail is valid JSON
        return ItemScore(status=response.status, C=0 if joint else None, G=0)
    obj = parse_response(response.text)
    if obj is None:
        return ItemScore(status=OutputStatus.UNPARSEABLE, C=0 if joint else None, G=0)
    valid: dict[str, bool] = {}
    G, canonical, set_f1 = _binding(obj, key, valid)
    C = _recognition(obj, key, valid) if joint else None
    return ItemScore(
        status=OutputStatus.COMPLETED,
        C=C,
        G=G,
        object_valid=True,
        field_valid=valid,
        canonical=canonical,
        set_f1=set_f1,
    )


def _binding(
    obj: dict[str, Any], key: dict[str, Any], valid: dict[str, bool]
) -> tuple[int, tuple[str, ...] | None, float | None]:
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
    if not ok:
        return 0, None, (0.0 if is_set else None)
    canonical = [domain[cast(str, a).strip()] for a in aliases]  # all strings: checked in ok
    if is_set:
        predicted = set(canonical)
        f1 = 2 * len(predicted & set(gold)) / (len(predicted) + len(gold))
        return int(predicted == set(gold)), tuple(sorted(predicted)), f1
    return int(canonical == gold), tuple(canonical), None


def _recognition(obj: dict[str, Any], key: dict[str, Any], valid: dict[str, bool]) -> int:
    private = ProbeKeyView(key)
    targets = private.read_targets
    # The contract's read shape decides (Kit names: "string" | "object_by_anchor"); several targets are always
    # an object keyed by anchor.
    multi = len(targets) > 1 or private.read_shape == "object_by_anchor"
    value = obj.get(READ_FIELD)
    if multi:
        required = {t["anchor_alias"] for t in targets}
        if not isinstance(value, dict) or set(value) != required:
            valid[READ_FIELD] = False
            return 0
        predictions = [value[t["anchor_alias"]] for t in targets]
    else:
        predictions = [value]
    correct = True
    field_ok = True
    for target, predicted in zip(targets, predictions, strict=True):
        profile = target.get("normalizer_id") or LABEL
        expected = normalize(target["expected"], profile)
        if expected is None:
            raise UnsupportedGoldReading(f"gold reading at {target['anchor_alias']} is unsupported")
        got = normalize(predicted, profile)
        field_ok = field_ok and got is not None
        correct = correct and got is not None and got == expected
    valid[READ_FIELD] = field_ok
    return int(correct)
