"""``manage.py backup --output DIR``: a consistent snapshot of the running app (``home.backups``)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from home.backups import backup_create
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Back up the database (pg_dump's custom format on PostgreSQL, SQLite's online backup API on SQLite), "
        "every media file a row names (images, rendered views, item files, uploads, release folders) and a "
        "manifest with row counts, the migration state and the SHA-256 of every file, into a new folder. "
        "Safe while the app runs: the rows and the list of files come from one snapshot."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", required=True, type=Path, help="a new (or empty) folder")

    def handle(self, *args, output: Path, **options) -> None:
        try:
            result = backup_create(output=output, progress=lambda line: self.stderr.write(line))
        except ApplicationError as error:
            raise CommandError(error.message) from error
        manifest = result.manifest
        rows = sum(manifest.counts.values())
        for missing in manifest.missing:
            self.stderr.write(
                self.style.WARNING(f"missing: {missing['name']} ({missing['field']}): {missing['reason']}")
            )
        self.stdout.write(
            f"Backup written to {result.folder}: {manifest.engine} database ({rows:,} rows in "
            f"{len(manifest.counts)} tables), {len(manifest.files) - 1:,} files, "
            f"{manifest.total_bytes / 1e6:,.1f} MB in "
            f"{sum(manifest.seconds.values()):.1f} s"
            + (f"; {len(manifest.missing)} referenced files were missing" if manifest.missing else "")
            + "."
        )
