from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exporters import export_kit_workspace
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Export the annotation work as a Kit source workspace (Kit §2.1–§2.3): the problems manifest, the images, "
        "every pass document and the review state, in the layout import_kit_workspace and the Kit's converter read."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, required=True, help="a new (or empty) folder to write")
        parser.add_argument("--source", default=None, help="only this source's problems")
        parser.add_argument("--parents", nargs="+", default=None, metavar="ID", help="only these problem ids")
        parser.add_argument(
            "--approved-only",
            action="store_true",
            help="only problems whose Passes 1–4 are all freshly approved (what the Kit's converter compiles)",
        )

    def handle(
        self,
        *args,
        output: Path,
        source: str | None,
        parents: list[str] | None,
        approved_only: bool,
        **options,
    ) -> None:
        step = 0

        def progress(done: int, total: int) -> None:
            nonlocal step
            if total and (done == total or done * 10 // total > step):
                step = done * 10 // total
                self.stderr.write(f"  {done}/{total} problems")

        try:
            summary = export_kit_workspace(
                output=output,
                source=source,
                problem_ids=parents,
                approved_only=approved_only,
                progress=progress,
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        counts = summary.as_dict()
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote {counts['problems']} problems ({counts['images']} images, {counts['pass_files']} pass "
                f"files, {counts['approved_stages']} approved and {counts['rejected_stages']} rejected stages, "
                f"{counts['excluded']} excluded) to {summary.output}: {counts['files']} files, "
                f"{counts['bytes']:,} bytes."
            )
        )
        if summary.skipped_not_approved:
            self.stdout.write(
                f"Left out {len(summary.skipped_not_approved)} problems whose Passes 1–4 are not all approved."
            )
