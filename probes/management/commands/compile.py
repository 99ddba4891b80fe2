"""manage.py compile (--parent ID | --all) [--seed 2027] [--chunk-size 50]: compile probes with a progress bar.

The command compiles in this process, chunk after chunk; a run created on the page or the API is compiled by
the Celery workers, one task per chunk, in parallel. Both give the same probes."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from physalign_site.cli import progress
from physalign_site.errors import ApplicationError
from probes.services import compile_run_create, compile_run_execute


class Command(BaseCommand):
    help = "Compile approved Pass 1–4 documents into probes (runs in this process)."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--parent", action="append", dest="parents", metavar="ID")
        target.add_argument("--all", action="store_true")
        parser.add_argument("--seed", type=int, default=2027)
        parser.add_argument("--chunk-size", type=int, default=None, help="parents per chunk (default 50)")

    def handle(self, *args, **options):
        try:
            run = compile_run_create(
                actor=None,
                parent_ids=options["parents"],
                seed=options["seed"],
                enqueue=False,
                chunk_size=options["chunk_size"],
            )
        except ApplicationError as error:
            raise CommandError(f"{error.message} {error.extra or ''}") from error
        # Compiles here, in this process: no worker to ask for. The total arrives with the first call.
        with progress(self, None, "Compiling") as bar:
            run = compile_run_execute(
                run_id=run.pk, progress=lambda done, total: bar.update(done, total=total)
            )
        self.stdout.write(
            f"compile run {run.pk}: {run.status}; "
            + ", ".join(f"{k}={v}" for k, v in sorted(run.counts.items()))
        )
        for issue in run.issues.order_by("code")[:50]:
            self.stdout.write(
                f"  blocked {issue.task_id} {issue.parent.problem_id}: {issue.code} {issue.scope}"
            )
