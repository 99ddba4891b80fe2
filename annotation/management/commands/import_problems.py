from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers import import_problems_manifest


class Command(BaseCommand):
    help = "Import parent problems from a JSONL manifest with images beside it (all rows or none)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "manifest", type=Path, help="manifest.jsonl; image paths are relative to its folder"
        )
        parser.add_argument(
            "--image-root",
            type=Path,
            default=None,
            help="folder the image paths are relative to (default: the manifest's folder)",
        )

    def handle(self, *args, manifest: Path, image_root: Path | None, **options) -> None:
        report = import_problems_manifest(manifest_path=manifest, image_root=image_root)
        for line in report.text_lines():
            self.stdout.write(line)
        if not report.succeeded:
            raise CommandError(report.summary())
        self.stdout.write(self.style.SUCCESS(report.summary()))
