"""manage.py import_kit_release DIR: import a release built elsewhere (public + private)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from physalign_site.errors import ApplicationError
from probes.releases import release_import


class Command(BaseCommand):
    help = "Import an existing release directory in the kit layout."

    def add_arguments(self, parser):
        parser.add_argument("path")

    def handle(self, *args, **options):
        try:
            release = release_import(path=Path(options["path"]), actor=None)
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message}") from error
        self.stdout.write(f"imported {release.release_id} ({release.items.count()} probes)")
