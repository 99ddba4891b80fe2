"""Store an inspect_ai log of the PhysAlign task as an evaluation run, scored and with its metrics."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.runs.inspect_log import InspectLogError, inspect_log_import


class Command(BaseCommand):
    help = "manage.py import_inspect_log LOG.eval [--name NAME] [--release ID] [--model CONFIG]"

    def add_arguments(self, parser):
        parser.add_argument(
            "log", type=Path, help="an inspect_ai log (.eval or .json) of physalign_studio's task"
        )
        parser.add_argument("--name", default="", help="the run's name (default: task, model and condition)")
        parser.add_argument(
            "--release", default=None, help="the release the log ran (default: the log's own)"
        )
        parser.add_argument(
            "--model",
            default=None,
            help="an existing model config to file the run under (default: inspect-<model>)",
        )

    def handle(self, *args, **options):
        try:
            result = inspect_log_import(
                path=options["log"],
                name=options["name"],
                release_id=options["release"],
                model_name=options["model"],
            )
        except InspectLogError as exc:
            raise CommandError(exc.message) from exc
        run = result.run
        self.stdout.write(
            f"run {run.pk} ({run}): {result.samples} requests imported, status {run.status}; "
            f"{run.snapshots.count()} metric snapshots"
        )
        if result.compared:
            self.stdout.write(
                f"inspect's scores agree with the app's on {result.agreed}/{result.compared} items"
            )
        for difference in result.differences:
            self.stderr.write(f"differs: {difference}")
