"""``manage.py media_prune [--dry-run] [--min-age MINUTES]``: remove stored files no row names."""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser

from home.backups import media_prune
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "List, and without --dry-run remove, the media files no row names (views left by a recompile, replaced "
        "images, interrupted exports). Files younger than --min-age minutes (default 60) are kept: they may "
        "belong to work being saved right now. Never removes a file a row still names."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would be removed; remove nothing"
        )
        parser.add_argument(
            "--min-age", type=float, default=60.0, metavar="MINUTES", help="keep younger files (default 60)"
        )

    def handle(self, *args, dry_run: bool, min_age: float, **options) -> None:
        if min_age < 0:
            raise CommandError("--min-age must be zero or more minutes.")
        try:
            report = media_prune(
                dry_run=dry_run,
                min_age=timedelta(minutes=min_age),
                progress=lambda line: self.stderr.write(line),
            )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        verb = "would remove" if dry_run else "removed"
        for orphan in report.orphans:
            self.stdout.write(
                f"{verb} {orphan.name} ({orphan.size:,} bytes, {orphan.modified:%Y-%m-%d %H:%M})"
            )
        self.stdout.write(
            f"{len(report.orphans):,} unreferenced files {'would be removed' if dry_run else 'removed'} ({report.orphan_bytes / 1e6:,.1f} MB); "
            f"{report.kept:,} referenced files kept; {len(report.young):,} unreferenced files younger than "
            f"{min_age:g} minutes kept."
        )
