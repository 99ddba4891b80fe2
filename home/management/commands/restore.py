"""``manage.py restore DIR``: a backup into the configured, empty database and media storage."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError

from home.backups import backup_restore
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Restore a folder written by `manage.py backup` into the configured database and media storage, both "
        "empty (a new database, or one only `migrate` has run on). Refuses, writing nothing, a non-empty "
        "target, a file whose SHA-256 does not match the manifest, a snapshot of another database engine, or "
        "one from a newer schema than this code."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", type=Path, help="the backup folder (it holds manifest.json)")

    def handle(self, *args, folder: Path, **options) -> None:
        try:
            result = backup_restore(folder=folder, progress=lambda line: self.stderr.write(line))
        except ApplicationError as error:
            raise CommandError(error.message) from error
        except OperationalError as error:
            raise CommandError(f"Refused: the configured database cannot be reached ({error}).") from error
        manifest = result.manifest
        self.stdout.write(
            f"Restored the backup of {manifest.created_at}: {sum(manifest.counts.values()):,} rows in "
            f"{len(manifest.counts)} tables, {result.files:,} files ({result.bytes / 1e6:,.1f} MB) in "
            f"{sum(result.seconds.values()):.1f} s ("
            + ", ".join(f"{part.removesuffix('_s')} {s:.1f} s" for part, s in result.seconds.items())
            + ")."
        )
        for release_id, path in result.moved_releases.items():
            self.stdout.write(f"Release {release_id} is now at {path}.")
        if result.unapplied_migrations:
            self.stdout.write(
                f"This code has {len(result.unapplied_migrations)} migrations the backup had not applied "
                f"(first {result.unapplied_migrations[0]}): run `manage.py migrate` next."
            )
