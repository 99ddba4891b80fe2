"""manage.py validate_release DIR: the Kit's validation (Kit §2.14, §7.1). It rebuilds the request, the frozen
records, the membership, the public QA files and release.json from private/project, private/request,
private/signoff.json and private/contract_schemas, compares them byte for byte, checks every image by hash and
refuses any public file that is not declared; a re-sealed FILE_MANIFEST.json does not hide a change."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from probes.releases import release_validate


class Command(BaseCommand):
    help = "Validate a release directory by the Kit's rules (rebuild from private/, compare, refuse leaks)."

    def add_arguments(self, parser):
        parser.add_argument("path")

    def handle(self, *args, **options):
        report = release_validate(Path(options["path"]))
        if not report.valid:
            for error in report.errors:
                self.stderr.write(f"{error['code']}: {error['detail']}")
            raise CommandError(
                f"release invalid ({len(report.errors)} errors: {', '.join(sorted(report.codes))})"
            )
        self.stdout.write("valid")
