"""manage.py export_release --split {development,test} --output DIR [--synthetic-example]."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from physalign_site.errors import ApplicationError
from probes.releases import release_export


class Command(BaseCommand):
    help = "Freeze approved probes of a split into a new release directory (kit layout)."

    def add_arguments(self, parser):
        parser.add_argument("--split", choices=["development", "test"], required=True)
        parser.add_argument("--output", required=True)
        parser.add_argument("--synthetic-example", action="store_true",
                            help="Synthetic sources only: export pending probes as a non-benchmark example.")

    def handle(self, *args, **options):
        try:
            release = release_export(split=options["split"], output=Path(options["output"]), actor=None,
                                     synthetic_example=options["synthetic_example"])
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message}") from error
        self.stdout.write(f"{release.release_id} {release.artifact_mode} {release.counts}")
