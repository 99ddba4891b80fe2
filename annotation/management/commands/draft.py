"""Draft one pass with an LLM for one problem or all of them, showing a progress bar."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from annotation.drafting.services import draft_execute, draft_run_create, draft_run_progress
from annotation.models import DraftRun, LLMDraft, ParentProblem
from models_registry.models import ModelConfig
from physalign_site.cli import ProgressDisplay, add_worker_timeout_argument, progress, require_worker
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Draft Pass N with a model: manage.py draft --pass N (--parent ID | --all) --model NAME. "
        "Work is queued for the Celery workers and followed here; --inline runs it in this process."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pass", dest="pass_no", type=int, required=True, choices=[1, 2, 3, 4, 5])
        scope = parser.add_mutually_exclusive_group(required=True)
        scope.add_argument("--parent", action="append", help="problem ID (repeatable)")
        scope.add_argument("--all", action="store_true", help="every problem that is not excluded")
        parser.add_argument("--model", required=True, help="model configuration name")
        parser.add_argument("--inline", action="store_true", help="run here instead of on the Celery workers")
        parser.add_argument(
            "--no-wait", action="store_true", help="queue and return without following progress"
        )
        parser.add_argument("--timeout", type=float, default=3600, help="seconds to follow progress")
        add_worker_timeout_argument(parser)

    def handle(
        self,
        *args,
        pass_no: int,
        parent,
        all: bool,
        model: str,
        inline: bool,
        no_wait: bool,
        timeout: float,
        worker_timeout: float,
        **opts,
    ):
        model_config = ModelConfig.objects.filter(name=model).first()
        if model_config is None:
            raise CommandError(f"No model configuration named {model!r} (see manage.py add_model).")
        parents = self._parents(all_parents=all, problem_ids=parent)
        try:
            run = draft_run_create(
                pass_no=pass_no, model_config=model_config, parents=parents, actor=None, dispatch=not inline
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Draft run #{run.pk}: Pass {pass_no}, {run.total} problem(s), model {model_config.name}"
        )
        if inline:
            self._run_inline(run)
        elif not no_wait:
            self._follow(run, timeout=timeout, worker_timeout=worker_timeout)
        self._summarize(run)

    @staticmethod
    def _parents(*, all_parents: bool, problem_ids: list[str]) -> list[ParentProblem]:
        """Every problem that is not excluded, or the named ones (all of which must exist)."""
        if all_parents:
            return list(ParentProblem.objects.exclude(status=ParentProblem.Status.EXCLUDED))
        parents = list(ParentProblem.objects.filter(problem_id__in=problem_ids))
        missing = set(problem_ids) - {p.problem_id for p in parents}
        if missing:
            raise CommandError(f"Unknown problem IDs: {', '.join(sorted(missing))}")
        return parents

    def _run_inline(self, run: DraftRun) -> None:
        with progress(self, run.total, "Drafting") as bar:
            for draft_id in LLMDraft.objects.filter(run=run).order_by("pk").values_list("pk", flat=True):
                draft_execute(draft_id=draft_id)
                self._show(bar, DraftRun.objects.get(pk=run.pk))

    def _follow(self, run: DraftRun, *, timeout: float, worker_timeout: float) -> None:
        """Wait for a worker, then show the run's progress until it finishes or ``timeout`` seconds pass."""
        require_worker(
            queued=f"Draft run #{run.pk}",
            follow=reverse("drafts:run_detail", args=[run.pk]),
            timeout=worker_timeout,
        )
        deadline = time.monotonic() + timeout
        with progress(self, run.total, "Drafting") as bar:
            while True:
                current = DraftRun.objects.get(pk=run.pk)
                self._show(bar, current)
                if current.finished_at is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)

    def _summarize(self, run: DraftRun) -> None:
        """The run's totals and cost, then one line per draft that is neither ready nor pending."""
        run.refresh_from_db()
        summary = draft_run_progress(run=run)
        self.stdout.write(
            f"Run #{run.pk} {summary['status']}: {summary['done']} drafted, {summary['failed']} "
            f"failed of {summary['total']}; cost ${summary['cost_usd']}"
        )
        for draft in (
            run.drafts.select_related("parent").exclude(status__in=["ready", "pending"]).order_by("pk")
        ):
            detail = draft.error or f"{len(draft.validation_errors)} validation issue(s)"
            self.stdout.write(f"  {draft.parent.problem_id}: {draft.status} — {detail[:160]}")

    @staticmethod
    def _show(bar: ProgressDisplay, run: DraftRun) -> None:
        bar.update(
            run.done + run.failed,
            total=run.total,
            drafted=run.done,
            failed=run.failed,
            cost=f"${run.cost_usd}",
        )
