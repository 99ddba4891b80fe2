"""manage.py import_prompt_templates PROMPTS_JSON TASK_REGISTRY_JSON [--normalizers F] [--protocol F]."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from kit.canonical import parse_json
from physalign_site.errors import ApplicationError
from probes.services import prompt_set_import


class Command(BaseCommand):
    help = "Load prompt templates and task questions in the kit's format and make them the active set."

    def add_arguments(self, parser):
        parser.add_argument("prompts")
        parser.add_argument("task_registry")
        parser.add_argument("--normalizers")
        parser.add_argument("--protocol")
        parser.add_argument("--name", default="imported")

    def handle(self, *args, **options):
        def load(path):
            return parse_json(Path(path).read_bytes()) if path else None

        try:
            stored = prompt_set_import(
                prompts=load(options["prompts"]),
                tasks=load(options["task_registry"]),
                normalizers=load(options["normalizers"]),
                protocol=load(options["protocol"]),
                name=options["name"],
            )
        except (ApplicationError, OSError, ValueError) as error:
            raise CommandError(str(getattr(error, "message", error))) from error
        self.stdout.write(
            f"active prompt set: {stored.name} {stored.template_version} sha256={stored.sha256}"
        )
