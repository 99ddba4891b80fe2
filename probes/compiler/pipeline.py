"""Compile one parent problem end to end (Kit §3.1 steps 1–4). Pure."""

from __future__ import annotations

from .errors import CompileError
from .groups import GroupEnumerator
from .probe import compile_proposal
from .prompts import DEFAULT_PROMPT_SET, PromptSet
from .source_index import build_source_index, parent_group_id, source_identity
from .types import BlockedGroup, ParentResult, ParentSource

DISABLED_TASKS = ("T01", "T02-set", "T04", "T05", "T05-set", "T06")


def compile_parent(
    source: ParentSource, *, prompt_set: PromptSet = DEFAULT_PROMPT_SET, seed: int = 2027
) -> ParentResult:
    """Every eligible group becomes a probe; every refused group or parent becomes a BlockedGroup."""
    result = ParentResult(
        problem_id=source.problem_id,
        group_id=parent_group_id(source),
        content_group_hint="",
        source_identity=source_identity(source),
    )
    try:
        index = build_source_index(source)
    except CompileError as error:
        result.blocked.append(
            BlockedGroup(
                task_id="parent",
                code=error.code,
                reasons=[error.code],
                scope=[source.problem_id],
                detail=error.detail,
            )
        )
        return result
    result.content_group_hint = index.content_group_hint
    result.observations = index.observations
    result.audit = {
        "issues": index.issues,
        "span_decisions": index.span_decisions,
        "span_sidecar_entries": index.span_entries,
        "identity_binding_ids": index.identity_binding_ids,
        "entity_visual_sources": index.entity_visual_sources,
    }
    originals = {img.image_id: img.data for img in source.images}
    enumerator = GroupEnumerator(index)
    for proposals in (enumerator.t02(), enumerator.t03()):
        for proposal in proposals:
            try:
                probe, seconds = compile_proposal(
                    index, proposal, originals=originals, prompt_set=prompt_set, seed=seed
                )
            except CompileError as error:
                result.blocked.append(
                    BlockedGroup(
                        task_id=proposal.task_id,
                        code=error.code,
                        reasons=[error.code],
                        scope=proposal.native["source_scope"],
                        group_id=proposal.native["group_id"],
                        detail=error.detail,
                    )
                )
                continue
            result.render_seconds += seconds
            result.probes.append(probe)
    result.blocked.extend(enumerator.blocked)
    return result
