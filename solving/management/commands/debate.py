"""Launch a debate run (Debate §3) and follow its progress: accuracy, calls, early stops and cost."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from physalign_site.cli import add_worker_timeout_argument, progress, require_worker
from physalign_site.errors import ApplicationError
from physalign_site.idlists import parse_id_list
from probes.selectors import release_by_reference
from solving.models import SolveRun
from solving.runs import debate_run_create, run_stats, solve_run_dispatch


class Command(BaseCommand):
    help = (
        "manage.py debate --solvers a,b,c [--pruner p] [--selector s] [--extractor e] [--frontend f] "
        "--level N (--release ID | --parents id1,id2) [--no-pruning] [--lenient-pruning] [--no-value-voting] "
        "[--rounds 0-2] [--tolerance 0.01] [--no-frontend] [--ocr tesseract] [--inline] [--no-wait]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--solvers", required=True, help="comma-separated model config names (1 for level 5)"
        )
        parser.add_argument("--pruner", default="")
        parser.add_argument("--selector", default="")
        parser.add_argument("--extractor", default="", help="light model re-extracting malformed answers")
        parser.add_argument(
            "--frontend", default="", help="model for the cropper, OCR, SVG and reconstructor"
        )
        parser.add_argument("--level", type=int, default=1, choices=[1, 2, 3, 4, 5])
        parser.add_argument("--release", default="", help="release id (NREL-…) or pk")
        parser.add_argument("--parents", default="", help="parent problem ids, separated by commas or spaces")
        parser.add_argument("--name", default="")
        parser.add_argument("--no-pruning", action="store_true")
        parser.add_argument("--lenient-pruning", action="store_true", help="keep 'not sure' memories")
        parser.add_argument("--no-value-voting", action="store_true", help="string voting (the ablation)")
        parser.add_argument("--rounds", type=int, default=2, help="max re-solve rounds, 0-2")
        parser.add_argument("--tolerance", type=float, default=None, help="relative tolerance (default 1e-2)")
        parser.add_argument("--no-frontend", action="store_true", help="switch every front-end module off")
        parser.add_argument("--ocr", choices=["model", "tesseract"], default=None)
        parser.add_argument(
            "--inline", action="store_true", help="run the chunks in this process (no worker)"
        )
        parser.add_argument("--no-wait", action="store_true")
        add_worker_timeout_argument(parser)

    def handle(self, *args, **options) -> None:
        if options["inline"]:
            from celery import current_app

            current_app.conf.task_always_eager = True
        try:
            run = self._create(options)
        except ApplicationError as exc:
            raise CommandError(str(getattr(exc, "message", exc))) from exc
        for warning in run.manifest.get("debate_warnings", []):
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(f"debate run {run.pk}: {run.total} planned problems (level {options['level']})")
        if options["inline"]:
            solve_run_dispatch(run_id=run.pk)  # eager: every chunk runs here, before we follow
        if options["no_wait"]:
            return
        require_worker(
            queued=f"debate run {run.pk}",
            follow=reverse("solving:debate_run_detail", args=[run.pk]),
            timeout=options["worker_timeout"],
        )
        self._follow(run)

    @staticmethod
    def _settings(options: dict[str, Any]) -> dict[str, Any]:
        """The ablation switches the options name (the rest keep the solver's defaults)."""
        settings: dict[str, Any] = {"max_resolve_rounds": options["rounds"]}
        switched_off = {
            "no_pruning": "pruning",
            "lenient_pruning": "strict_pruning",
            "no_value_voting": "value_voting",
        }
        settings.update({key: False for option, key in switched_off.items() if options[option]})
        if options["tolerance"] is not None:
            settings["rel_tol"] = options["tolerance"]
        if options["no_frontend"]:
            settings.update(cropper=False, sharpen=False, visual_extractor=False, reconstructor=False)
        if options["ocr"]:
            settings["ocr"] = options["ocr"]
        return settings

    def _create(self, options: dict[str, Any]) -> SolveRun:
        release = release_by_reference(options["release"]) if options["release"] else None
        return debate_run_create(
            solver_names=[s for s in options["solvers"].split(",") if s.strip()],
            pruner=options["pruner"] or None,
            selector=options["selector"] or None,
            extractor=options["extractor"] or None,
            frontend=options["frontend"] or None,
            level=options["level"],
            settings=self._settings(options),
            release=release,
            parent_ids=parse_id_list(options["parents"]) or None,
            name=options["name"],
            enqueue=not options["inline"],
        )

    def _follow(self, run: SolveRun) -> None:
        with progress(self, run.total, "Debating") as bar:
            while True:
                run.refresh_from_db()
                stats = run_stats(run)
                bar.update(stats.done, total=stats.total, calls=stats.calls, status=run.status)
                if run.status not in (SolveRun.Status.QUEUED, SolveRun.Status.RUNNING):
                    break
                time.sleep(1)
        acc = stats.binary_acc
        shown = f"{acc.value:.3f}" if acc.value is not None else f"[{acc.lower:.3f}, {acc.upper:.3f}]"
        self.stdout.write(
            f"debate run {run.pk}: {run.status}; accuracy {shown}; calls {stats.calls} "
            f"({(stats.avg_calls or 0):.2f}/problem); early-stopped {stats.early_stopped}/{stats.done}; "
            f"tokens {stats.tokens}; cost ${stats.cost_usd:.6f}; statuses {stats.by_status}"
        )
