"""Executing a solve run's rows, the same path for both kinds: claim a row under its lease, get its outcome
(one model call for ``single``, the debate solver for ``debate``), and write it once under the claim guard.

A row's result is written only by the claim holder while the row is not terminal, so a redelivered task never
writes twice and a returned output is never resampled. Scoring: choice and fill-in answers are matched by
script at once (``match``, ``credit`` ∈ {0, 1}, ``correct = match``). Short-answer and calculation answers
wait for an expert (``grading=pending``, ``solving.grading``). Refusals and truncated outputs are model output
failures: credit 0, not correct, for every answer type. Infrastructure-missing rows have no credit
(``grading=none``) and enter SolveAcc only through its bounds.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

import llm
from llm import OutputStatus
from models_registry.models import OutputStatusChoices
from models_registry.providers import provider_config_for, shared_limiter
from run_engine.engine import rows_claim
from run_engine.rows import retries_left

from ..models import DebateTurn, SolveResponse, SolveRun
from ..scoring import SCRIPTED_TYPES, extract_boxed_answer, match_answer
from .control import DEFAULT_OPTIONS, ROWS, TERMINAL, solve_run_finalize
from .debate_execute import debate_response_execute
from .prompts import build_solve_request


def _claim(row_id: int, lease: int) -> tuple[SolveResponse | None, str]:
    """(row, "claimed") or (None, "terminal" | "busy" | "exhausted"), by the run engine's lease rules."""
    with transaction.atomic():
        claim = rows_claim(ROWS, [row_id], lease_seconds=lease)
        if claim.busy:
            return None, "busy"
        if claim.exhausted:  # three claims died without an answer: not an answer
            _finish(
                SolveResponse.objects.select_related("parent").get(pk=row_id),
                status=SolveResponse.Status.INFRA_MISSING,
                raw_output=None,
                error="worker lost the request three times",
            )
            return None, "exhausted"
        if not claim.claimed:
            return None, "terminal"
    return SolveResponse.objects.get(pk=row_id), "claimed"


def _score_fields(
    row: SolveResponse, *, status: str, raw_output: str | None, final_answer: str | None
) -> dict:
    """Extraction, script match, credit and grading state for a finished row."""
    parent = row.parent
    if status == SolveResponse.Status.INFRA_MISSING or raw_output is None and final_answer is None:
        return {
            "final_answer": "",
            "match": None,
            "credit": None,
            "correct": None,
            "grading": SolveResponse.Grading.NONE,
        }
    extracted = final_answer if final_answer is not None else extract_boxed_answer(raw_output)
    extracted = (extracted or "").strip()
    if status in (SolveResponse.Status.REFUSAL, SolveResponse.Status.TRUNCATED):
        return {
            "final_answer": extracted,
            "match": False if row.answer_type in SCRIPTED_TYPES else None,
            "credit": 0.0,
            "correct": False,
            "grading": SolveResponse.Grading.SCRIPT,
        }
    if row.answer_type in SCRIPTED_TYPES:
        matched = match_answer(extracted, parent.answer, row.answer_type, parent.options)
        return {
            "final_answer": extracted,
            "match": matched,
            "credit": 1.0 if matched else 0.0,
            "correct": matched,
            "grading": SolveResponse.Grading.SCRIPT,
        }
    return {
        "final_answer": extracted,
        "match": None,
        "credit": None,
        "correct": None,
        "grading": SolveResponse.Grading.PENDING,
    }


def _finish(
    row: SolveResponse,
    *,
    turns: list[dict[str, Any]] | None = None,
    final_answer: str | None = None,
    **fields: Any,
) -> None:
    for name, value in fields.items():
        setattr(row, name, value)
    for name, value in _score_fields(
        row, status=row.status, raw_output=row.raw_output, final_answer=final_answer
    ).items():
        setattr(row, name, value)
    row.completed_at = timezone.now()
    row.save()
    if turns:
        DebateTurn.objects.filter(response=row).delete()
        DebateTurn.objects.bulk_create(
            [DebateTurn(response=row, **_turn_fields(turn, seq)) for seq, turn in enumerate(turns, start=1)]
        )


_TURN_FIELDS = {f.name for f in DebateTurn._meta.get_fields() if getattr(f, "concrete", False)} - {
    "id",
    "response",
    "created_at",
}


def _turn_fields(turn: dict[str, Any], seq: int) -> dict[str, Any]:
    fields = {k: v for k, v in turn.items() if k in _TURN_FIELDS or k == "model_id"}
    fields.setdefault("seq", seq)
    if "cost_usd" in fields:
        fields["cost_usd"] = Decimal(str(fields["cost_usd"]))
    return fields


def _single_outcome(row: SolveResponse) -> dict[str, Any]:
    model = row.run.model
    assert model is not None  # a single-solver run is created with its model (PROTECT keeps it)
    config = provider_config_for(model)
    config = replace(config, max_retries=retries_left(config.max_retries, row.claims))
    request = build_solve_request(row.parent, request_id=f"solve:{row.run_id}:{row.parent.problem_id}")
    result = llm.generate(request, config, limiter=shared_limiter())
    statuses: dict[str, OutputStatusChoices] = {
        OutputStatus.FAILED: SolveResponse.Status.INFRA_MISSING,
        OutputStatus.REFUSAL: SolveResponse.Status.REFUSAL,
        OutputStatus.TRUNCATED: SolveResponse.Status.TRUNCATED,
    }
    status = statuses.get(result.status, SolveResponse.Status.COMPLETED)
    return {
        "status": status,
        "raw_output": None if status == SolveResponse.Status.INFRA_MISSING else result.text,
        "attempts": result.attempts_record(),
        "finish_reason": result.finish_reason or "",
        "provider_status": result.status,
        "calls": 1,
        "input_tokens": result.usage.input_tokens,
        "output_tokens": result.usage.output_tokens,
        "cost_usd": Decimal(result.cost_usd),
        "latency_ms": result.latency_ms,
        "request_hash": request.fingerprint(),
        "error": result.error[:2000],
    }


def _debate_outcome(row: SolveResponse) -> dict[str, Any]:
    outcome = dict(debate_response_execute(row=row))
    status = outcome.get("status", SolveResponse.Status.INFRA_MISSING)
    if status not in TERMINAL:
        raise ValueError(f"debate outcome status {status!r} is not terminal")
    infra = status == SolveResponse.Status.INFRA_MISSING
    return {
        "status": status,
        "raw_output": None if infra else outcome.get("raw_output"),
        "final_answer": None if infra else (outcome.get("final_answer") or ""),
        "provider_status": status,
        "calls": int(outcome.get("calls") or 0),
        "input_tokens": int(outcome.get("input_tokens") or 0),
        "output_tokens": int(outcome.get("output_tokens") or 0),
        "cost_usd": Decimal(str(outcome.get("cost_usd") or 0)),
        "latency_ms": int(outcome.get("latency_ms") or 0),
        "error": str(outcome.get("error") or "")[:2000],
        "turns": list(outcome.get("turns") or []),
    }


def solve_response_execute(*, row: SolveResponse) -> None:
    """Call the model (or the debate solver) for a claimed row and write the result once, under the claim."""
    outcome = _debate_outcome(row) if row.run.kind == SolveRun.Kind.DEBATE else _single_outcome(row)
    with transaction.atomic():
        locked = SolveResponse.objects.select_for_update(of=("self",)).select_related("parent").get(pk=row.pk)
        if locked.status in TERMINAL or locked.claim_token != row.claim_token:
            return  # another claim finished it: never write twice
        _finish(locked, **outcome)


def solve_chunk_process(*, run_id: int, response_ids: list[int]) -> list[int]:
    """Process the rows; return the ids another live claim still holds (the task retries those later)."""
    run = SolveRun.objects.get(pk=run_id)
    lease = int(run.options.get("claim_lease_seconds", DEFAULT_OPTIONS["claim_lease_seconds"]))
    busy = []
    for row_id in response_ids:
        if SolveRun.objects.filter(pk=run_id, status=SolveRun.Status.CANCELLED).exists():
            return []
        row, state = _claim(row_id, lease)
        if state == "busy":
            busy.append(row_id)
            continue
        if row is None:
            continue
        row = SolveResponse.objects.select_related("run__model", "parent").get(pk=row.pk)
        solve_response_execute(row=row)
    if not busy and not run.responses.exclude(status__in=TERMINAL).exists():
        solve_run_finalize(run_id=run_id)
    return busy
