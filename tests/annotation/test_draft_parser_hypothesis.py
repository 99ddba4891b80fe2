"""Property tests of the draft parser: whatever a model writes, parsing never raises, every draft gets a
definite outcome, and what is kept is storable (PostgreSQL jsonb/text, canonical JSON)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.drafting.services import (
    PARSE_ERROR,
    draft_execute,
    draft_outcome,
    draft_run_create,
    parse_output,
)
from annotation.models import DraftRun, LLMDraft
from kit.canonical import canonical_bytes
from llm.types import LLMResult, OutputStatus, ProviderReply, Usage
from models_registry.models import ModelConfig
from physalign_site import jsonsafety
from tests.factories import ParentProblemFactory, ProblemImageFactory

HOSTILE_CHARS = st.sampled_from(["\x00", "\ud800", "\udfff", "\ufeff", "\u2028", '"', "\\", "{", "["])
ANY_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF) | HOSTILE_CHARS, max_size=200
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | ANY_TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4),
    max_leaves=40,
)


@st.composite
def deep_nesting(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=1, max_value=6000))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}"), ('{"a":[', "]}")]))
    leaf = draw(st.sampled_from(["", "1", '"x"', "[]"]))
    closing = draw(st.integers(min_value=0, max_value=depth))  # sometimes unbalanced
    return opener * depth + leaf + closer * closing


def documents(values: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """JSON texts as a model might write them: ASCII-escaped or raw, fenced or bare."""

    def dump(value: Any, ascii_only: bool, fenced: bool) -> str:
        text = json.dumps(value, ensure_ascii=ascii_only)  # allow_nan: NaN/Infinity tokens appear too
        return f"```json\n{text}\n```" if fenced else text

    return st.builds(dump, values, st.booleans(), st.booleans())


PASS_LIKE = st.fixed_dictionaries(
    {
        "problem_id": ANY_TEXT,
        "visual_nodes": st.lists(st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=5), max_size=3),
        "ambiguities": st.lists(JSON_VALUES, max_size=2),
    }
)
MODEL_OUTPUTS = ANY_TEXT | deep_nesting() | documents(JSON_VALUES) | documents(PASS_LIKE)


def assert_storable(document: dict[str, Any]) -> None:
    jsonsafety.check(document)
    canonical_bytes(document)  # no NaN, every string encodes as UTF-8


@settings(max_examples=400, deadline=None)
@given(text=MODEL_OUTPUTS)
def test_parse_output_never_raises_and_returns_a_storable_object_or_a_reason(text):
    parsed, error = parse_output(text)
    if parsed is None:
        assert isinstance(error, str) and error
    else:
        assert error == ""
        assert isinstance(parsed, dict)
        assert_storable(parsed)


def test_known_hostile_outputs_fail_with_their_reason():
    assert parse_output("[" * 5000) == (
        None,
        "The output is not usable JSON: The JSON is nested more than 64 levels deep.",
    )
    assert parse_output('{"a": "\\u0000"}') == (
        None,
        "The output is not usable JSON: JSON strings may not contain the NUL character \\u0000 (at $.a).",
    )
    assert parse_output('{"a": 1e400}') == (
        None,
        "The output is not usable JSON: JSON numbers must be finite (at $.a).",
    )
    assert parse_output('```json\n{"a": [1]}\n```') == ({"a": [1]}, "")


@pytest.fixture
def parent(db):
    parent = ParentProblemFactory(problem_id="prob_hypo")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    return parent


def result(text: str, status: str) -> LLMResult:
    return LLMResult(
        text=text,
        finish_reason="stop",
        status=status,
        usage=Usage(),
        latency_ms=1,
        cost_usd=Decimal(0),
        raw={},
        attempts=[],
        error="boom" if status == OutputStatus.FAILED else "",
        error_kind="server" if status == OutputStatus.FAILED else "",
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=MODEL_OUTPUTS,
    status=st.sampled_from(
        [OutputStatus.COMPLETED, OutputStatus.TRUNCATED, OutputStatus.REFUSAL, OutputStatus.FAILED]
    ),
)
def test_every_model_result_gets_a_definite_draft_outcome(parent, text, status):
    outcome = draft_outcome(parent=parent, pass_no=1, result=result(text, status))
    assert outcome.status in (LLMDraft.Status.READY, LLMDraft.Status.INVALID, LLMDraft.Status.FAILED)
    if outcome.status == LLMDraft.Status.FAILED:
        assert outcome.parsed is None and outcome.error
        if status in (OutputStatus.COMPLETED, OutputStatus.TRUNCATED):
            assert [issue["code"] for issue in outcome.issues] == [PARSE_ERROR]
    else:
        assert status in (OutputStatus.COMPLETED, OutputStatus.TRUNCATED)
        assert_storable(outcome.parsed)
        assert (outcome.status == LLMDraft.Status.READY) == (outcome.issues == [])


class RawTextProvider:
    def __init__(self, text: str) -> None:
        self.text = text

    def call(self, request: Any, config: Any, *, http_client: Any = None, attempt: int = 1) -> ProviderReply:
        return ProviderReply(text=self.text, finish_reason="stop", usage=Usage(), raw={})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=MODEL_OUTPUTS)
def test_executing_a_draft_always_finishes_it_and_stores_it(parent, text):
    config, _ = ModelConfig.objects.get_or_create(name="hypo", provider="scripted", model="script-1")
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = draft_execute(draft_id=LLMDraft.objects.get(run=run).pk, provider=RawTextProvider(text))
    assert draft.status in (LLMDraft.Status.READY, LLMDraft.Status.INVALID, LLMDraft.Status.FAILED)
    assert draft.raw_output == jsonsafety.storable_text(text)
    run.refresh_from_db()
    assert run.status in (DraftRun.Status.SUCCEEDED, DraftRun.Status.FAILED) and run.done + run.failed == 1
