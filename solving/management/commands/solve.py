"""Launch (or with --resume, continue) a solving run (App. B.4) and follow its progress."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from physalign_site.cli import add_worker_timeout_argument, progress, require_worker
from physalign_site.errors import ApplicationError
from physalign_site.idlists import parse_id_list
from probes.selectors import release_by_reference
from solving.models import SolveRun
from solving.runs import solve_run_create, solve_run_dispatch, solve_run_resume
from solving.summary import solve_run_summary


class Command(BaseCommand):
    help = "manage.py solve --release ID | --parents a,b --model NAME [--name …] | --resume RUN"

    def add_arguments(self, parser):
        parser.add_argument("--release", default="", help="release id (NREL-…) or pk: solve all its parents")
        parser.add_argument("--parents", default="", help="parent problem ids, separated by commas or spaces")
        parser.add_argument("--model", default="", help="ModelConfig name")
        parser.add_argument("--name", default="")
        parser.add_argument("--resume", type=int, help="continue a cancelled or interrupted run")
        parser.add_argument(
            "--inline", action="store_true", help="run the chunks in this process (no worker)"
        )
        parser.add_argument("--no-wait", action="store_true")
        add_worker_timeout_argument(parser)

    def handle(self, *args, **options):
        try:
            if options["resume"]:
                run = SolveRun.objects.get(pk=options["resume"])
                if options["inline"]:
                    self._eager()
                run = solve_run_resume(run=run)
            else:
                run = self._create(options)
        except (ApplicationError, SolveRun.DoesNotExist) as exc:
            raise CommandError(str(getattr(exc, "message", exc))) from exc
        self.stdout.write(f"solve run {run.pk}: {run.total} planned responses")
        if options["inline"] and not options["resume"]:
            self._eager()
            solve_run_dispatch(run_id=run.pk)
        if options["no_wait"]:
            return
        require_worker(
            queued=f"solve run {run.pk}",
            follow=reverse("solving:solve_run_detail", args=[run.pk]),
            timeout=options["worker_timeout"],
        )
        self._follow(run)

    @staticmethod
    def _eager():
        from celery import current_app

        current_app.conf.task_always_eager = True

    def _create(self, options):
        release = None
        if options["release"]:
            release = release_by_reference(options["release"])
        parents = parse_id_list(options["parents"])
        if not options["model"]:
            raise CommandError("--model is required")
        return solve_run_create(
            model=options["model"],
            release=release,
            parent_ids=parents or None,
            name=options["name"],
            enqueue=not options["inline"],
        )

    def _follow(self, run):
        with progress(self, run.total, "Solving") as bar:
            while True:
                run.refresh_from_db()
                s = solve_run_summary(run)
                rate = f"{s.rate_per_s:.1f}/s" if s.rate_per_s else "-"
                eta = f"{s.eta_s:.0f}s" if s.eta_s is not None else "-"
                bar.update(s.done, total=s.total, rate=rate, ETA=eta, status=run.status)
                if run.status not in (SolveRun.Status.QUEUED, SolveRun.Status.RUNNING):
                    break
                time.sleep(1)
        acc = s.solve_acc
        value = (
            f"{acc.value:.3f}"
            if acc.value is not None
            else (f"n/a (bounds {acc.lower:.3f}–{acc.upper:.3f})" if acc.lower is not None else "n/a")
        )
        self.stdout.write(
            f"solve run {run.pk}: {run.status}; statuses {s.by_status}; SolveAcc {value}; "
            f"awaiting grading {s.awaiting_grading}; cost ${s.cost_usd:.4f}"
        )
