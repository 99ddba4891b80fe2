"""LLM drafting of pass documents: request, parse + validate into an ``LLMDraft``, batch runs,
and the human decision (accept whole, accept per record, discard).

A draft never overwrites a human document by itself: only ``draft_accept`` writes, through
``pass_document_save`` (optimistic concurrency and the validator's hard refusals apply), and the
version it creates records the draft it came from and how the human changed it.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

import llm
from audit.services import event_record
from kit.canonical import digest
from kit.model_output import unfenced
from llm import ImageInput, LLMRequest, OutputStatus
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter
from physalign_site import jsonsafety
from physalign_site.errors import ApplicationError
from run_engine.engine import (
    RowTable,
    RunTable,
    claim_applied,
    lease_release,
    rows_claim,
    rows_held,
    run_cancel,
    run_dispatch,
    run_resume,
)
from run_engine.rows import retries_left

from ..models import DraftRun, LLMDraft, ParentProblem, PassDocument
from ..selectors import parent_passes_approved, pass_validation_issues
from ..services import pass_document_save
from .prompts import PROMPT_VERSIONS, PromptImage, build_draft_prompt, skeleton

logger = logging.getLogger(__name__)

REVIEWABLE = (LLMDraft.Status.READY, LLMDraft.Status.INVALID)
# a claimed draft keeps its status (pending); the lease alone marks the claim
DRAFT_ROWS = RowTable(
    LLMDraft, terminal=tuple(s for s in LLMDraft.Status.values if s != LLMDraft.Status.PENDING), running=None
)
DRAFT_LEASE_SECONDS = 600
PARSE_ERROR = "PARSE_ERROR"


# ------------------------------------------------------------------------------------------------
# Building the request (public input only)
# ------------------------------------------------------------------------------------------------


def draft_request_build(*, parent: ParentProblem, pass_no: int) -> tuple[LLMRequest, str]:
    """The model request for drafting ``pass_no`` of ``parent`` and the prompt version."""
    images = []
    for image in parent.images.order_by("ordinal"):
        with image.file.open("rb") as handle:
            data = handle.read()
        images.append(PromptImage(image.image_id, image.width, image.height, image.media_type, data))
    earlier = {
        doc.pass_no: doc.document for doc in PassDocument.objects.filter(parent=parent, pass_no__lt=pass_no)
    }
    prompt = build_draft_prompt(
        pass_no=pass_no,
        problem_id=parent.problem_id,
        stem=parent.stem,
        query=parent.query,
        options=parent.options or [],
        images=images,
        earlier_passes=earlier,
        solution=parent.solution if pass_no == 5 else None,
    )
    request = LLMRequest(
        system=prompt.system,
        user=prompt.user,
        images=tuple(ImageInput(i.data, i.media_type) for i in prompt.images),
        request_id=f"draft:{parent.problem_id}:pass{pass_no}",
    )
    return request, prompt.version


def parse_output(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in a model's output (code fences tolerated) or ``(None, parse error)``. Never
    raises: JSON the database could not store (NUL, unpaired surrogates, NaN, nesting past
    ``jsonsafety.MAX_DEPTH``) is a parse error like a syntax error."""
    stripped = unfenced(text, exact=False) or ""
    if not stripped:
        return None, "The output is empty."
    try:
        value = jsonsafety.loads(stripped)
    except jsonsafety.JSONRejected as exc:
        return None, f"The output is not usable JSON: {exc.message}"
    except ValueError as exc:
        return None, f"The output is not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"The output is JSON but not an object (got {type(value).__name__})."
    return value, ""


# ------------------------------------------------------------------------------------------------
# Runs and execution, through the one run engine (``run_engine``): one chunk task per draft
# ------------------------------------------------------------------------------------------------


def _chunk_task() -> Any:
    from ..tasks import draft_chunk_task  # the tasks module imports this one

    return draft_chunk_task


def _run_finalize(run_id: int) -> None:
    with transaction.atomic():
        _run_finish_if_complete(run_id=run_id)


DRAFT_RUNS = RunTable(
    DraftRun,
    rows="drafts",
    row_table=DRAFT_ROWS,
    verb="draft_run",
    idle=(DraftRun.Status.CANCELLED, DraftRun.Status.SUCCEEDED, DraftRun.Status.FAILED),
    done=(DraftRun.Status.SUCCEEDED, DraftRun.Status.FAILED),
    done_message="Every draft of this run has been returned.",
    chunk_task=_chunk_task,
    finalize=_run_finalize,
    default_chunk_size=1,  # one model call per task: the workers draft in parallel
    taper=False,
    options=None,
    started=None,
)


def draft_run_dispatch(*, run_id: int) -> int:
    """Queue a chunk task for every pending draft. Safe to call again (resume, watchdog)."""
    return run_dispatch(DRAFT_RUNS, run_id=run_id)


def draft_run_cancel(*, run: DraftRun, actor: Any = None) -> DraftRun:
    """Stop a queued or running run: its pending drafts are no longer sent (a call in flight still lands)."""
    return run_cancel(DRAFT_RUNS, run=run, actor=actor)


def draft_run_resume(*, run: DraftRun, actor: Any = None) -> DraftRun:
    """Continue a cancelled or interrupted run: its pending drafts are queued again."""
    return run_resume(DRAFT_RUNS, run=run, actor=actor)


@transaction.atomic
def draft_run_create(
    *,
    pass_no: int,
    model_config: ModelConfig,
    parents: list[ParentProblem],
    actor: Any,
    dispatch: bool = True,
) -> DraftRun:
    """One draft per parent, queued for the Celery workers once the transaction commits."""
    if pass_no not in (1, 2, 3, 4, 5):
        raise ApplicationError("Pass numbers run from 1 to 5.", code="pass_not_found", status=404)
    if not model_config.is_active:
        raise ApplicationError(f"The model {model_config.name} is not active.", code="model_inactive")
    if pass_no == 5:
        parents = [p for p in parents if parent_passes_approved(parent=p)]
    if not parents:
        raise ApplicationError(
            "No problem to draft (Pass 5 needs Passes 1–4 approved).", code="nothing_to_draft"
        )
    user = actor if getattr(actor, "is_authenticated", False) else None
    run = DraftRun.objects.create(
        pass_no=pass_no,
        model_config=model_config,
        prompt_version=PROMPT_VERSIONS[pass_no],
        status=DraftRun.Status.QUEUED,
        total=len(parents),
        created_by=user,
    )
    LLMDraft.objects.bulk_create(
        [
            LLMDraft(
                parent=parent,
                pass_no=pass_no,
                run=run,
                model_config=model_config,
                model_label=f"{model_config.name} ({model_config.provider}:{model_config.model})",
                prompt_version=run.prompt_version,
                status=LLMDraft.Status.PENDING,
                created_by=user,
            )
            for parent in parents
        ]
    )
    event_record(
        actor=actor,
        verb="draft_run.create",
        obj=run,
        after={"pass_no": pass_no, "total": run.total, "model": model_config.name},
    )
    if dispatch:
        transaction.on_commit(partial(draft_run_dispatch, run_id=run.pk))
    return run


@dataclass(frozen=True)
class DraftOutcome:
    status: str
    parsed: dict[str, Any] | None
    issues: list[dict[str, str]]
    error: str


def draft_outcome(*, parent: ParentProblem, pass_no: int, result: Any) -> DraftOutcome:
    """What a model result makes of a draft: ``failed`` (no answer, a refusal, or output that does not
    parse), else ``ready`` or ``invalid`` by the pass validator. Total: every text gets one of them."""
    if result.status == OutputStatus.FAILED:
        return DraftOutcome(LLMDraft.Status.FAILED, None, [], f"{result.error_kind}: {result.error}")
    if result.status == OutputStatus.REFUSAL:
        return DraftOutcome(LLMDraft.Status.FAILED, None, [], f"refusal: {result.text[:500]}")
    parsed, parse_error = parse_output(result.text)
    if parsed is None:
        prefix = "truncated output; " if result.status == OutputStatus.TRUNCATED else ""
        return DraftOutcome(
            LLMDraft.Status.FAILED,
            None,
            [{"code": PARSE_ERROR, "path": "", "message": parse_error}],
            prefix + parse_error,
        )
    issues = pass_validation_issues(parent=parent, pass_no=pass_no, document=parsed)
    status = LLMDraft.Status.READY if not issues else LLMDraft.Status.INVALID
    return DraftOutcome(status, parsed, issues, "")


def draft_chunk_process(*, run_id: int, draft_ids: list[int]) -> list[int]:
    """Draft the chunk's pending drafts; return the ids another live claim holds (the task looks at them
    again later, ``busy_requeue``)."""
    busy = []
    for draft_id in draft_ids:
        _, held = _draft_run(draft_id, {})
        if held:
            busy.append(draft_id)
    return busy


def draft_execute(*, draft_id: int, **generate_kwargs: Any) -> LLMDraft | None:
    """Call the model for one pending draft and store the outcome. Idempotent: a draft that is no longer
    pending, or that another live claim holds (never paid twice), or whose run was cancelled, is left alone,
    and only the first finished execution is written."""
    draft, _ = _draft_run(draft_id, generate_kwargs)
    return draft


def _draft_run(draft_id: int, generate_kwargs: dict[str, Any]) -> tuple[LLMDraft | None, bool]:
    """(the draft afterwards, whether another live claim holds it)."""
    draft = LLMDraft.objects.select_related("parent", "model_config", "run").filter(pk=draft_id).first()
    if draft is None or draft.status != LLMDraft.Status.PENDING:
        return draft, False
    if draft.run is not None and draft.run.status == DraftRun.Status.CANCELLED:
        return draft, False
    with transaction.atomic():
        claim = rows_claim(DRAFT_ROWS, [draft.pk], lease_seconds=DRAFT_LEASE_SECONDS)
        if claim.busy:  # another worker is calling the model for it right now: never pay twice
            return draft, True
        if claim.exhausted:
            _draft_store(draft, status=LLMDraft.Status.FAILED, error="worker lost the draft three times")
            draft.refresh_from_db()
            return draft, False
        if not claim.claimed:
            return draft, False
    claim_applied(draft, claim, DRAFT_ROWS)
    try:
        _draft_call(draft, claim.token, generate_kwargs)
    except Exception:  # the task retries (Celery's backoff) and takes the draft over at once, as a claim
        lease_release(DRAFT_ROWS, [draft.pk], token=claim.token)
        raise
    draft.refresh_from_db()
    return draft, False


def _draft_call(draft: LLMDraft, token: str, generate_kwargs: dict[str, Any]) -> None:
    """Call the model for a claimed draft (provider retries bounded across its claims) and store the outcome."""
    if draft.run_id:
        DraftRun.objects.filter(pk=draft.run_id, status=DraftRun.Status.QUEUED).update(
            status=DraftRun.Status.RUNNING
        )
    request, version = draft_request_build(parent=draft.parent, pass_no=draft.pass_no)
    model = draft.model_config
    assert model is not None, "a draft is created with its model (PROTECT keeps it)"
    config = provider_config_for(model)
    config = replace(config, max_retries=retries_left(config.max_retries, draft.claims))
    generate_kwargs.setdefault("limiter", shared_limiter())
    result = llm.generate(request, config, **generate_kwargs)
    outcome = draft_outcome(parent=draft.parent, pass_no=draft.pass_no, result=result)
    record = {
        **request.record(),
        "prompt_version": version,
        "model": model.name,
        "provider": model.provider,
        "model_id": model.model,
        "settings": {
            "max_output_tokens": model.max_output_tokens,
            "temperature": model.temperature,
            "reasoning": model.reasoning,
        },
        "finish_reason": result.finish_reason,
        "result_status": result.status,
    }
    _draft_store(
        draft,
        status=outcome.status,
        token=token,
        request_record=record,
        raw_output=jsonsafety.storable_text(result.text),
        parsed_document=outcome.parsed,
        validation_errors=outcome.issues,
        error=jsonsafety.storable_text(outcome.error[:5000]),
        usage=result.usage.as_dict(),
        attempts=result.attempts_record(),
        latency_ms=result.latency_ms,
        cost_usd=result.cost_usd,
        prompt_version=version,
    )


def _draft_store(
    draft: LLMDraft, *, status: str, token: str | None = None, cost_usd: Any = 0, **fields: Any
) -> None:
    """Write a pending draft's outcome once (under its claim when ``token`` is given) and count it in its run."""
    with transaction.atomic():
        rows = (
            rows_held(DRAFT_ROWS, [draft.pk], token=token)
            if token is not None
            else LLMDraft.objects.filter(pk=draft.pk, status=LLMDraft.Status.PENDING)
        )
        written = rows.update(status=status, cost_usd=cost_usd, **fields)
        if written and draft.run_id:
            counter = "failed" if status == LLMDraft.Status.FAILED else "done"
            DraftRun.objects.filter(pk=draft.run_id).update(
                **{counter: F(counter) + 1}, cost_usd=F("cost_usd") + cost_usd
            )
            _run_finish_if_complete(run_id=draft.run_id)


def _run_finish_if_complete(*, run_id: int) -> None:
    """Once every draft has its outcome; a cancelled run stays cancelled (a resume finishes it)."""
    run = DraftRun.objects.select_for_update().get(pk=run_id)
    if run.status == DraftRun.Status.CANCELLED:
        return
    if run.finished_at is None and run.done + run.failed >= run.total:
        run.status = DraftRun.Status.SUCCEEDED if run.done else DraftRun.Status.FAILED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])


def draft_run_progress(*, run: DraftRun) -> dict[str, Any]:
    finished = run.done + run.failed
    percent = int(100 * finished / run.total) if run.total else 100
    return {
        "id": run.pk,
        "status": run.status,
        "pass_no": run.pass_no,
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "finished": finished,
        "percent": percent,
        "cost_usd": str(run.cost_usd),
        "model": run.model_config.name,
        "finished_at": run.finished_at,
    }


# ------------------------------------------------------------------------------------------------
# Review: compare, accept whole / per record, discard
# ------------------------------------------------------------------------------------------------


def document_records(document: Any) -> dict[str, Any]:
    """Flatten a pass document into ``{"collection/id": record, "field": value}`` for comparison."""
    records: dict[str, Any] = {}
    if not isinstance(document, dict):
        return records
    for key, value in document.items():
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            for index, item in enumerate(value):
                ident = item.get("id", item.get("step_id", f"#{index}"))
                records[f"{key}/{ident}"] = item
        else:
            records[key] = value
    return records


def record_comparison(*, draft_document: Any, current_document: Any) -> list[dict[str, Any]]:
    """Per record: ``new`` (only in the draft), ``changed``, ``same``, ``current_only``."""
    draft = document_records(draft_document)
    current = document_records(current_document)
    rows = []
    for key, value in draft.items():
        state = (
            "new" if key not in current else ("same" if digest(current[key]) == digest(value) else "changed")
        )
        rows.append({"key": key, "state": state, "draft": value, "current": current.get(key)})
    for key, value in current.items():
        if key not in draft:
            rows.append({"key": key, "state": "current_only", "draft": None, "current": value})
    return rows


def acceptance_stats(*, draft_document: Any, accepted_document: Any) -> dict[str, int]:
    """How the human changed the draft: records added, removed, changed, kept (by collection/id)."""
    draft = document_records(draft_document)
    final = document_records(accepted_document)
    return {
        "added": sum(1 for key in final if key not in draft),
        "removed": sum(1 for key in draft if key not in final),
        "changed": sum(1 for key in final if key in draft and digest(final[key]) != digest(draft[key])),
        "kept": sum(1 for key in final if key in draft and digest(final[key]) == digest(draft[key])),
    }


def merge_records(
    *, current_document: Any, draft_document: dict[str, Any], keys: list[str], pass_no: int, problem_id: str
) -> dict[str, Any]:
    """The current document with the chosen draft records put in (same id replaced, else appended)."""
    base = (
        copy.deepcopy(current_document)
        if isinstance(current_document, dict)
        else skeleton(pass_no, problem_id)
    )
    chosen = set(keys)
    draft_records = document_records(draft_document)
    unknown = chosen - set(draft_records)
    if unknown:
        raise ApplicationError(
            "Some chosen records are not in the draft.",
            code="record_unknown",
            extra={"keys": sorted(unknown)},
        )
    for key in [k for k in draft_records if k in chosen]:  # draft order
        collection, _, _ = key.partition("/")
        if "/" not in key:
            base[key] = draft_records[key]
            continue
        record = draft_records[key]
        items = base.setdefault(collection, [])
        ident = record.get("id", record.get("step_id"))
        for index, item in enumerate(items):
            if isinstance(item, dict) and item.get("id", item.get("step_id")) == ident:
                items[index] = record
                break
        else:
            items.append(record)
    return base


@transaction.atomic
def draft_accept(
    *,
    draft: LLMDraft,
    actor: Any,
    expected_version: int | None,
    record_keys: list[str] | None = None,
    document: dict[str, Any] | None = None,
) -> PassDocument:
    """Accept a draft into the pass document: whole (default), only ``record_keys`` merged into the
    current document, or as ``document`` (the draft after the human's edits)."""
    draft = LLMDraft.objects.select_for_update().select_related("parent").get(pk=draft.pk)
    if draft.status not in REVIEWABLE or draft.parsed_document is None:
        raise ApplicationError(
            "Only a ready (or invalid but parsed) draft can be accepted.",
            code="draft_not_acceptable",
            extra={"status": draft.status},
        )
    current = PassDocument.objects.filter(parent=draft.parent, pass_no=draft.pass_no).first()
    if document is not None:
        mode, final = "edited", document
    elif record_keys is not None:
        mode = "records"
        final = merge_records(
            current_document=current.document if current else None,
            draft_document=draft.parsed_document,
            keys=record_keys,
            pass_no=draft.pass_no,
            problem_id=draft.parent.problem_id,
        )
    else:
        mode, final = "whole", draft.parsed_document
    # an accepted draft is a version of its own, never joined with the annotator's autosaves
    doc = pass_document_save(
        parent=draft.parent,
        pass_no=draft.pass_no,
        document=final,
        actor=actor,
        expected_version=expected_version,
        note=f"accepted LLM draft #{draft.pk} ({mode})",
        source_draft=draft,
    )
    stats = acceptance_stats(draft_document=draft.parsed_document, accepted_document=doc.document)
    draft.status = LLMDraft.Status.ACCEPTED
    draft.accepted_into = doc
    draft.acceptance = {
        **stats,
        "mode": mode,
        "record_keys": record_keys or [],
        "version": doc.version,
        "document_sha256": doc.document_sha256,
        "accepted_at": timezone.now().isoformat(),
    }
    draft.save(update_fields=["status", "accepted_into", "acceptance"])
    event_record(actor=actor, verb="llm_draft.accept", obj=draft, after=draft.acceptance)
    return doc


@transaction.atomic
def draft_discard(*, draft: LLMDraft, actor: Any) -> LLMDraft:
    draft = LLMDraft.objects.select_for_update().get(pk=draft.pk)
    if draft.status in (LLMDraft.Status.ACCEPTED, LLMDraft.Status.DISCARDED, LLMDraft.Status.PENDING):
        raise ApplicationError(
            "This draft cannot be discarded now.",
            code="draft_not_discardable",
            extra={"status": draft.status},
        )
    before = draft.status
    draft.status = LLMDraft.Status.DISCARDED
    draft.save(update_fields=["status"])
    event_record(
        actor=actor,
        verb="llm_draft.discard",
        obj=draft,
        before={"status": before},
        after={"status": draft.status},
    )
    return draft
