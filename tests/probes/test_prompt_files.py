"""Kit-shaped prompt and task-registry files: what an upload refuses before anything compiles."""

from __future__ import annotations

import copy

import pytest

from probes.compiler import CompileError, validate_prompt_files

from .prompt_fixture import KIT_SHAPED_PROMPTS, KIT_SHAPED_TASKS


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"T02": {"binding_key": "thing"}}, "BINDING_KEY"),
        ({"T03": {"allowed_cardinalities": ["set"]}}, "TASK_OUTPUT_CONTRACT"),
        ({"T03": {"allowed_cardinalities": None}}, "TASK_OUTPUT_CONTRACT"),
        ({"T02": {"binding_key": None}}, "TASK_REGISTRY_SHAPE"),
    ],
)
def test_a_task_file_the_compiler_could_not_score_is_refused_at_upload(change, code):
    """A registry whose contract no probe could satisfy is refused up front, with the code compiling would block with."""
    tasks = copy.deepcopy(KIT_SHAPED_TASKS)
    for task_id, fields in change.items():
        tasks[task_id].update(fields)
    with pytest.raises(CompileError) as refused:
        validate_prompt_files(KIT_SHAPED_PROMPTS, tasks)
    assert refused.value.code == code
