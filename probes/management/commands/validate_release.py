"""manage.py validate_release DIR: rebuild and compare; refuse leaks and changed files."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from probes.releases import release_validate


class Command(BaseCommand):
    help = "Validate a release directory."

    def add_arguments(self, parser):
        parser.add_argument("path")

    def handle(self, *args, **options):
        report = release_validate(Path(options["path"]))
        if not report.valid:
            for error in report.errors:
                self.stderr.write(f"{error['code']}: {error['detail']}")
            raise CommandError(f"release invalid ({len(report.errors)} errors)")
        self.stdout.write("valid")
