"""manage.py import_kit_decisions FILE [--draft DIR] [--actor USERNAME]."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kit.canonical import bytes_digest
from physalign_site import jsonsafety
from physalign_site.errors import ApplicationError
from review.services import kit_decisions_import


class Command(BaseCommand):
    help = (
        "Import a Kit review-decision file (physalign_decisions_v1 or native_release_reviews_v1) onto the "
        "probes it binds through a Kit draft (--draft: the draft or review-project directory; needed once "
        "per draft). Stale, unknown or malformed files are refused whole."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--draft", help="Kit native draft directory (or a Kit review project around one)")
        parser.add_argument("--actor", help="record the import as this admin (default: the operator)")

    def handle(self, *args, **options):
        actor = None
        if options["actor"]:
            actor = get_user_model().objects.filter(username=options["actor"]).first()
            if actor is None:
                raise CommandError(f"No user {options['actor']!r}.")
        try:
            data = Path(options["file"]).read_bytes()
            report = kit_decisions_import(
                document=jsonsafety.loads(data),
                file_bytes_sha256=bytes_digest(data),
                actor=actor,
                draft_root=Path(options["draft"]) if options["draft"] else None,
            )
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message} {error.extra or ''}".strip()) from error
        except (OSError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"catalog {report.catalog_root}: imported {len(report.imported)}, "
            f"already imported {len(report.unchanged)}, pending {len(report.pending)}, "
            f"settled {len(report.settled)}"
        )
        for qid, state in sorted(report.settled.items()):
            self.stdout.write(f"  {qid} {state}")
