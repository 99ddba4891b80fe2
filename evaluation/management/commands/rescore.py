"""Recompute every item score and metric of a run from the stored raw outputs (no model is called)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import EvalRun
from evaluation.runs import eval_run_rescore


class Command(BaseCommand):
    help = "manage.py rescore RUN"

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)

    def handle(self, *args, **options):
        try:
            run = EvalRun.objects.get(pk=options["run"])
        except EvalRun.DoesNotExist as exc:
            raise CommandError(f"no run {options['run']}") from exc
        result = eval_run_rescore(run=run)
        self.stdout.write(
            f"run {run.pk}: re-scored; {result['changed_items']} item scores changed; "
            f"{run.snapshots.count()} metric snapshots"
        )
