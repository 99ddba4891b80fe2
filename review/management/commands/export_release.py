"""manage.py export_release (--signoff ID | --split {development,test} --without-signoff) --output DIR
[--synthetic-example].

The normal path is ``--signoff ID``: the release a review signoff covers (an accepted audit assessment or
individually approved parents, with the six release confirmations). Exporting without a signoff is an explicit
admin override (``--without-signoff``); without either the command refuses and says why. An override is written in
the same Kit layout (private/project, private/request, contract schemas) but carries no private/signoff.json, so
``validate_release`` refuses it with EXPLICIT_SIGNOFF_REQUIRED: it is never a reviewed release."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from physalign_site.errors import ApplicationError
from probes.release_words import release_export_sentence
from probes.releases import release_export
from review.models import Signoff
from review.services import signoff_export


class Command(BaseCommand):
    help = "Freeze approved probes into a new release directory (kit layout), normally from a review signoff."

    def add_arguments(self, parser):
        parser.add_argument("--signoff", type=int, help="Export the release this review signoff covers.")
        parser.add_argument("--split", choices=["development", "test"])
        parser.add_argument("--output", required=True)
        parser.add_argument(
            "--synthetic-example",
            action="store_true",
            help="Synthetic sources only: export pending probes as a non-benchmark example.",
        )
        parser.add_argument(
            "--without-signoff",
            action="store_true",
            help="Admin override: export a split without a review signoff (not a reviewed release).",
        )

    def handle(self, *args, **options):
        try:
            if options["signoff"]:
                signoff = Signoff.objects.filter(pk=options["signoff"]).first()
                if signoff is None:
                    raise CommandError(f"SIGNOFF_NOT_FOUND: no signoff {options['signoff']}.")
                release = signoff_export(
                    signoff=signoff, output=Path(options["output"]), actor=signoff.reviewer
                )
            elif not options["without_signoff"]:
                raise CommandError(
                    "SIGNOFF_REQUIRED: a release is exported from a review signoff (an accepted audit assessment or "
                    "individually approved parents, with the six release confirmations). Pass --signoff ID, or "
                    "--without-signoff to override explicitly."
                )
            elif not options["split"]:
                raise CommandError("SPLIT_REQUIRED: --without-signoff needs --split development|test.")
            else:
                self.stderr.write("Exporting WITHOUT a review signoff (--without-signoff).")
                release = release_export(
                    split=options["split"],
                    output=Path(options["output"]),
                    actor=None,
                    synthetic_example=options["synthetic_example"],
                )
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message}") from error
        for problem_id, reason in sorted(getattr(release, "left_out", {}).items()):
            self.stderr.write(f"left out {problem_id}: {reason}")
        self.stdout.write(release_export_sentence(release))
