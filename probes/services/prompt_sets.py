"""Prompt template sets: the active one (the product's default wording on first use) and kit-format imports."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from physalign_site.errors import ApplicationError
from probes.compiler import CompileError, PromptSet, validate_prompt_files
from probes.compiler.prompts import DEFAULT_PROMPT_SET

from ..models import PromptTemplateSet


def prompt_set_active() -> tuple[PromptTemplateSet, PromptSet]:
    """The active template set; the product's default wording is created on first use."""
    active = PromptTemplateSet.objects.filter(is_active=True).first()
    if active is None:
        active = _prompt_set_store(name="default", prompt_set=DEFAULT_PROMPT_SET, activate=True)
    return active, PromptSet(active.prompts, active.tasks)


@transaction.atomic
def prompt_set_import(
    *,
    prompts: Any,
    tasks: Any,
    name: str = "imported",
    normalizers: Any = None,
    protocol: Any = None,
    activate: bool = True,
) -> PromptTemplateSet:
    """Load kit-format ``prompts_v2.json`` + ``task_registry_v2.json`` (Kit §11) as a new version."""
    try:
        prompt_set = validate_prompt_files(prompts, tasks)
    except CompileError as error:
        raise ApplicationError(
            f"The prompt files do not have the kit's shape: {error}", code=error.code
        ) from error
    return _prompt_set_store(
        name=name, prompt_set=prompt_set, activate=activate, normalizers=normalizers, protocol=protocol
    )


def _prompt_set_store(
    *, name: str, prompt_set: PromptSet, activate: bool, normalizers: Any = None, protocol: Any = None
) -> PromptTemplateSet:
    stored, _ = PromptTemplateSet.objects.get_or_create(
        sha256=prompt_set.sha256,
        defaults={
            "name": name,
            "template_version": prompt_set.version,
            "prompts": prompt_set.prompts,
            "tasks": prompt_set.tasks,
            "normalizers": normalizers,
            "protocol": protocol,
        },
    )
    if activate and not stored.is_active:
        PromptTemplateSet.objects.filter(is_active=True).update(is_active=False)
        stored.is_active = True
        stored.save(update_fields=["is_active"])
    return stored
