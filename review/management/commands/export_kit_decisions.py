"""manage.py export_kit_decisions --draft CATALOG_ROOT_OR_PREFIX --output FILE [--force] [--actor USERNAME]."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from physalign_site.errors import ApplicationError
from review.services.kit_decisions_export import kit_decisions_export, kit_draft_find


class Command(BaseCommand):
    help = (
        "Write our probe-review decisions on the probes an imported Kit draft binds as a physalign_decisions_v1 "
        "file on the Kit's roots (decided probes with their decision of record, the others pending; stale "
        "bindings and probes settled only by a Kit file are left out). Refuses an existing file unless --force."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--draft", required=True, help="the imported draft's catalog root, or a prefix of it"
        )
        parser.add_argument("--output", required=True, help="the file to write")
        parser.add_argument("--force", action="store_true", help="overwrite an existing file")
        parser.add_argument("--actor", help="record the export as this key holder (default: the operator)")

    def handle(self, *args, **options):
        actor = None
        if options["actor"]:
            actor = get_user_model().objects.filter(username=options["actor"]).first()
            if actor is None:
                raise CommandError(f"No user {options['actor']!r}.")
        output = Path(options["output"])
        if output.exists() and not options["force"]:
            raise CommandError(f"{output} exists: pass --force to overwrite it.")
        if output.is_dir():
            raise CommandError(f"{output} is a folder: name the file to write.")
        try:
            with transaction.atomic():  # the audit event stands only if the file was written
                result = kit_decisions_export(
                    draft=kit_draft_find(catalog_root=options["draft"]), actor=actor
                )
                with output.open("wb" if options["force"] else "xb") as sink:
                    sink.write(result.data)
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message} {error.extra or ''}".strip()) from error
        except FileExistsError as error:
            raise CommandError(f"{output} exists: pass --force to overwrite it.") from error
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error}") from error
        self.stdout.write(
            f"catalog {result.catalog_root}: wrote {output} ({len(result.data)} bytes, sha256 {result.sha256}): "
            f"decided {len(result.decided)}, pending {len(result.pending)}"
        )
        for why, qids in result.left_out.items():
            self.stdout.write(f"  left out ({why}): {len(qids)}: {' '.join(qids)}")
