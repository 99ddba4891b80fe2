from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers import import_kit_workspace


class Command(BaseCommand):
    help = "Import a kit source workspace (Kit §2.1–§2.3): parents, images, passes, review state."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "workspace", type=Path, help="folder with workspace_config.json and blind/manifest.jsonl"
        )
        parser.add_argument(
            "--dataset-root",
            type=Path,
            default=None,
            help="folder the manifest's image paths are relative to (overrides dataset_dir)",
        )

    def handle(self, *args, workspace: Path, dataset_root: Path | None, **options) -> None:
        report = import_kit_workspace(workspace=workspace, dataset_root=dataset_root)
        for line in report.text_lines():
            self.stdout.write(line)
        if not report.succeeded:
            raise CommandError(report.summary())
        self.stdout.write(self.style.SUCCESS(report.summary()))
