"""Solving runs (App. B.4): plan one response per parent, execute in leased claims, score, grade, summarize.

Execution mirrors evaluation runs (``evaluation/runs.py``): every ``SolveResponse`` row is planned up
front (fixed denominator); a row is claimed with a lease (``claims`` ≤ 3 = one try plus two
infrastructure retries); its result is written only by the claim holder while the row is not terminal,
so a redelivered task never writes twice and a returned output is never resampled.

Scoring: choice and fill-in answers are matched by script at once (``match``, ``credit`` ∈ {0, 1},
``correct = match``). Short-answer and calculation answers wait for an expert (``grading=pending``) who
grades rubric components (``solve_response_grade``). Refusals and truncated outputs are model output
failures: credit 0, not correct, for every answer type. Infrastructure-missing rows have no credit
(``grading=none``) and enter SolveAcc only through its bounds.

The prompt (``build_solve_request``) is the ORIGINAL problem only — statement, question, options, images
— in a fresh context; never the answer, the solution or any probe metadata.

Debate runs (``kind=debate``) are executed through ``solving.debate_runs.debate_response_execute``;
this module writes that outcome (fields + ``DebateTurn`` rows) under the same claim guard.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

import llm
from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from llm import ImageInput, LLMRequest, OutputStatus
from models_registry.models import ModelConfig, OutputStatusChoices
from models_registry.providers import provider_config_for, shared_limiter
from physalign_site.db import analyze_after_commit
from physalign_site.errors import ApplicationError
from probes.models import Release
from run_engine.engine import MAX_CLAIMS, RowTable, RunTable, rows_claim, run_cancel, run_dispatch, run_resume
from run_engine.manifest import code_revision, package_versions

from .models import DebateTurn, SolveResponse, SolveRun
from .scoring import (
    SCRIPTED_TYPES,
    extract_boxed_answer,
    match_answer,
)

DEFAULT_OPTIONS = {"chunk_size": 5, "claim_lease_seconds": 600}
TERMINAL = SolveResponse.TERMINAL
PROMPT_VERSION = "physalign_solve_v1"

SOLVE_SYSTEM = (
    "You are an expert physics problem solver. Solve the problem below from its statement, its "
    "question and its diagram(s). Work carefully and state your final answer exactly as asked."
)
OUTPUT_FORMAT = {
    "choice": (
        "Reason step by step, then give the letter(s) of the correct option(s) as the final answer in "
        "\\boxed{}, e.g. \\boxed{B}; if several options are correct, give all their letters, e.g. "
        "\\boxed{AC}."
    ),
    "fill": (
        "Reason step by step, then give only the final value or expression, with its units, in \\boxed{}, "
        "e.g. \\boxed{2.5\\ \\text{m/s}}."
    ),
    "short": (
        "Write a detailed worked solution: the physical principles used, each step of the reasoning and "
        "the calculations. End with the final answer in \\boxed{}."
    ),
    "calc": (
        "Write a detailed worked solution: the physical principles used, the equations and every step of "
        "the calculation with units. End with the final answer (all requested quantities) in \\boxed{}."
    ),
}
PROMPT_TEMPLATE_SHA256 = digest(
    {
        "version": PROMPT_VERSION,
        "system": SOLVE_SYSTEM,
        "output_format": OUTPUT_FORMAT,
        "sections": ["[Problem]", "[Question]", "[Options]", "[Images]", "[Output format]"],
    }
)


# ------------------------------------------------------------------------------------------------ the prompt


def _parent_images(parent: ParentProblem) -> tuple[ImageInput, ...]:
    images = []
    for img in parent.images.order_by("ordinal"):
        with img.file.open("rb") as handle:
            images.append(ImageInput(handle.read(), img.media_type))
    return tuple(images)


def solve_prompt_text(parent: ParentProblem) -> str:
    """The user text of the solving prompt (public fields only: statement, question, options, image list)."""
    stem, query = (parent.stem or "").strip(), (parent.query or "").strip()
    sections: list[tuple[str, str]] = []
    if stem or query:
        if stem:
            sections.append(("[Problem]", stem))
        if query:
            sections.append(("[Question]", query))
    else:
        sections.append(("[Problem]", (parent.raw_question or "").strip()))
    if parent.options:
        lines = [f"{o.get('id', '')}. {o.get('text', '')}".rstrip() for o in parent.options]
        sections.append(("[Options]", "\n".join(lines)))
    image_ids = list(parent.images.order_by("ordinal").values_list("image_id", flat=True))
    if image_ids:
        sections.append(
            (
                "[Images]",
                "\n".join(f"{image_id}: attached image {n}" for n, image_id in enumerate(image_ids, start=1)),
            )
        )
    sections.append(("[Output format]", OUTPUT_FORMAT.get(parent.answer_type, OUTPUT_FORMAT["fill"])))
    return "\n\n".join(f"{title}\n{body}" for title, body in sections)


def build_solve_request(parent: ParentProblem, *, request_id: str = "") -> LLMRequest:
    """The solving request of a parent: a fresh context with the original problem only and its images."""
    return LLMRequest(
        system=SOLVE_SYSTEM,
        user=solve_prompt_text(parent),
        images=_parent_images(parent),
        request_id=request_id or f"solve:{parent.problem_id}",
    )


# ------------------------------------------------------------------------------------------------ planning


def _resolve_model(model: ModelConfig | str | None) -> ModelConfig | None:
    if model is None or model == "":
        return None
    if isinstance(model, ModelConfig):
        config = model
    else:
        found = ModelConfig.objects.filter(name=model).first()
        if found is None:
            raise ApplicationError(f"Unknown model {model!r}.", code="model_invalid")
        config = found
    if not config.is_active:
        raise ApplicationError(f"The model {config.name!r} is not active.", code="model_invalid")
    return config


def _planned_parents(release: Release | None, parent_ids: list[str] | None) -> list[ParentProblem]:
    if release is not None and parent_ids:
        raise ApplicationError(
            "Give either a release or a list of parents, not both.", code="parents_invalid"
        )
    if release is not None:
        wanted = sorted(set(release.items.values_list("problem_id", flat=True)))
    elif parent_ids:
        wanted = list(dict.fromkeys(p.strip() for p in parent_ids if p and p.strip()))
    else:
        raise ApplicationError("Choose a release or at least one parent problem.", code="no_parents")
    parents = {p.problem_id: p for p in ParentProblem.objects.filter(problem_id__in=wanted)}
    missing = [p for p in wanted if p not in parents]
    if missing:
        raise ApplicationError(
            f"Unknown parent problems: {missing[:20]}.", code="parents_invalid", extra={"missing": missing}
        )
    if not wanted:
        raise ApplicationError("The release has no parent problems.", code="no_parents")
    return [parents[p] for p in wanted]


def _manifest(run: SolveRun, parents: list[ParentProblem]) -> dict[str, Any]:
    import platform

    types: dict[str, int] = {}
    for parent in parents:
        types[parent.answer_type] = types.get(parent.answer_type, 0) + 1
    return {
        "schema": "physalign_solve_manifest_v1",
        "code_revision": code_revision(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "kind": run.kind,
        "seed": run.seed,
        "options": run.options,
        "release": run.release.release_id if run.release else None,
        "parent_ids_sha256": digest(run.parent_ids),
        "answer_types": types,
        "prompt": {"version": PROMPT_VERSION, "template_sha256": PROMPT_TEMPLATE_SHA256},
        "model": provider_config_for(run.model).settings_record() if run.model else None,
        "scoring": {
            "script": "boxed_match_v1 (choice letters; fill-in canonical same_value rel_tol=1e-2)",
            "expert": "rubric sum(p)/sum(w)",
            "max_infra_retries": MAX_CLAIMS - 1,
        },
    }


@transaction.atomic
def solve_run_create(
    *,
    kind: str = "single",
    model: ModelConfig | str | None = None,
    release: Release | None = None,
    parent_ids: list[str] | None = None,
    name: str = "",
    options: dict[str, Any] | None = None,
    actor: Any = None,
    enqueue: bool = True,
) -> SolveRun:
    """Create the run and one ``SolveResponse`` per parent (the fixed denominator), then queue the work."""
    if kind not in (SolveRun.Kind.SINGLE, SolveRun.Kind.DEBATE):
        raise ApplicationError("The kind must be 'single' or 'debate'.", code="kind_invalid")
    config = _resolve_model(model)
    if kind == SolveRun.Kind.SINGLE and config is None:
        raise ApplicationError("A single-solver run needs a model.", code="model_invalid")
    parents = _planned_parents(release, parent_ids)
    run = SolveRun.objects.create(
        name=name.strip()[:200],
        kind=kind,
        model=config,
        release=release,
        parent_ids=[p.problem_id for p in parents],
        options={**DEFAULT_OPTIONS, **(options or {})},
        total=len(parents),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    SolveResponse.objects.bulk_create(
        [
            SolveResponse(
                run=run,
                parent=p,
                answer_type=p.answer_type,
                grading=SolveResponse.Grading.SCRIPT
                if p.answer_type in SCRIPTED_TYPES
                else SolveResponse.Grading.NONE,
            )
            for p in parents
        ]
    )
    analyze_after_commit(SolveResponse, rows=len(parents))
    run.manifest = _manifest(run, parents)
    run.save(update_fields=["manifest"])
    event_record(
        actor=actor,
        verb="solve_run.create",
        obj=run,
        after={"total": run.total, "kind": kind, "model": config.name if config else None},
    )
    if enqueue:
        transaction.on_commit(lambda: solve_run_dispatch(run_id=run.pk))
    return run


def _chunk_task() -> Any:
    from .tasks import solve_chunk_task  # the tasks module imports this one

    return solve_chunk_task


ROWS = RowTable(SolveResponse, terminal=TERMINAL, running=SolveResponse.Status.RUNNING)
RUNS = RunTable(
    SolveRun,
    rows="responses",
    row_table=ROWS,
    verb="solve_run",
    idle=(SolveRun.Status.CANCELLED, SolveRun.Status.COMPLETED, SolveRun.Status.GRADING),
    done=(SolveRun.Status.COMPLETED, SolveRun.Status.GRADING),
    done_message="Every response of this run has been returned.",
    chunk_task=_chunk_task,
    finalize=lambda run_id: solve_run_finalize(run_id=run_id),
    default_chunk_size=DEFAULT_OPTIONS["chunk_size"],
    taper=False,
)


def solve_run_dispatch(*, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row. Safe to call again (resume, watchdog)."""
    return run_dispatch(RUNS, run_id=run_id)


def solve_run_cancel(*, run: SolveRun, actor: Any = None) -> SolveRun:
    return run_cancel(RUNS, run=run, actor=actor)


def solve_run_resume(*, run: SolveRun, actor: Any = None) -> SolveRun:
    return run_resume(RUNS, run=run, actor=actor)


def solve_run_finalize(*, run_id: int) -> SolveRun | None:
    """Once every row is terminal: ``grading`` while a short/calc answer awaits its expert, else ``completed``."""
    with transaction.atomic():
        run = SolveRun.objects.select_for_update().get(pk=run_id)
        if run.status in (SolveRun.Status.CANCELLED, SolveRun.Status.FAILED):
            return None
        if run.responses.exclude(status__in=TERMINAL).exists():
            return None
        pending = run.responses.filter(grading=SolveResponse.Grading.PENDING).exists()
        status = SolveRun.Status.GRADING if pending else SolveRun.Status.COMPLETED
        if run.status == status:
            return run
        run.status = status
        run.finished_at = run.finished_at or timezone.now()
        run.save(update_fields=["status", "finished_at"])
    return run


# ------------------------------------------------------------------------------------------------ execution


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
    config = replace(
        config, max_retries=max(0, min(int(config.max_retries), MAX_CLAIMS - 1 - (row.claims - 1)))
    )
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
    # imported here: the debate solver's module is needed by debate runs only
    from .debate_runs import debate_response_execute  # debate_runs imports this module

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
