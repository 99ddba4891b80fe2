"""Launch (or with --resume, continue) an evaluation run and follow its progress."""

from __future__ import annotations

import time

from celery import current_app
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from evaluation.models import EvalRun
from evaluation.runs import (
    eval_run_budget_set,
    eval_run_create,
    eval_run_dispatch,
    eval_run_preview,
    eval_run_resume,
    run_progress,
)
from evaluation.runs.budget import budget_parse
from physalign_site.cli import add_worker_timeout_argument, progress, require_worker
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param
from probes.selectors import release_by_reference


class Command(BaseCommand):
    help = (
        "manage.py evaluate --release ID --models a,b --conditions raw,gold,no_image,reordered "
        "[--probes interface=T03-image,limit=20] | --resume RUN"
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--release", default="", help="release id (NREL-…) or pk; omit for all current probes"
        )
        parser.add_argument("--models", default="")
        parser.add_argument("--conditions", default="raw")
        parser.add_argument(
            "--probes", default="", help="filter: interface=…,task_id=…,limit=N,probe_ids=a;b"
        )
        parser.add_argument("--name", default="")
        parser.add_argument("--resume", type=int, help="continue a cancelled, paused or interrupted run")
        parser.add_argument("--resamples", type=int, default=2000)
        parser.add_argument(
            "--reuse-responses",
            action="store_true",
            help="reuse an earlier run's completed response to the same request and model settings",
        )
        parser.add_argument(
            "--budget-usd",
            default=None,
            help="stop claiming requests when spent plus in-flight estimated cost would pass this many dollars "
            "(the run pauses, resumable); with --resume, the paused run's new budget",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="send OpenAI, Anthropic and Gemini models' requests through their provider batch APIs "
            "(about half the price, answered within 24 h; failed or expired items are then called directly)",
        )
        parser.add_argument(
            "--estimate", action="store_true", help="print the requests and estimated cost, launch nothing"
        )
        parser.add_argument(
            "--inline", action="store_true", help="run the chunks in this process (no worker)"
        )
        parser.add_argument("--no-wait", action="store_true")
        add_worker_timeout_argument(parser)

    def handle(self, *args, **options):
        if options["inline"]:  # before a resume dispatches: the chunks run here, never also on a broker
            current_app.conf.task_always_eager = True
        try:
            if options["resume"]:
                run = EvalRun.objects.get(pk=options["resume"])
                if options["budget_usd"] is not None:
                    run = eval_run_budget_set(run=run, budget_usd=options["budget_usd"])
                run = eval_run_resume(run=run)
            else:
                run = self._create(options)
                if run is None:
                    return
        except (ApplicationError, EvalRun.DoesNotExist) as exc:
            raise CommandError(str(getattr(exc, "message", exc))) from exc
        self.stdout.write(f"run {run.pk}: {run.total} planned requests")
        if options["inline"] and not options["resume"]:
            eval_run_dispatch(run_id=run.pk)
        if options["no_wait"]:
            return
        require_worker(
            queued=f"evaluation run {run.pk}",
            follow=reverse("evaluation:run_detail", args=[run.pk]),
            timeout=options["worker_timeout"],
        )
        self._follow(run)

    def _create(self, options):
        release = None
        if options["release"]:
            release = release_by_reference(options["release"])
        probe_filter = {}
        for part in filter(None, options["probes"].split(",")):
            key, _, value = part.partition("=")
            probe_filter[key] = (
                value.split(";")
                if key == "probe_ids"
                else int_param(value, name="limit")
                if key == "limit"
                else value
            )
        models = [m for m in options["models"].split(",") if m]
        conditions = [c for c in options["conditions"].split(",") if c]
        plan = {
            "model_names": models,
            "conditions": conditions,
            "release": release,
            "probe_filter": probe_filter,
        }
        self._estimate(plan, batch=options["batch"])
        if options["estimate"]:
            return None
        run_options = {"resamples": options["resamples"]}
        if options["reuse_responses"]:
            run_options["reuse_responses"] = True
        if options["budget_usd"] is not None:
            run_options["budget_usd"] = str(budget_parse(options["budget_usd"]))
        if options["batch"]:
            run_options["execution"] = "batch"
        return eval_run_create(**plan, name=options["name"], options=run_options, start=not options["inline"])

    def _estimate(self, plan, *, batch):
        """The launch preview's requests and estimated cost (``llm.estimate``'s approximation)."""
        preview = eval_run_preview(**plan, batch=batch)
        for e in preview.estimates:
            self.stdout.write(
                f"  {e.model}: {e.requests} requests, ~{e.input_tokens} input tokens, "
                f"≤{e.output_tokens} output tokens, ~${e.cost_usd:.6f}"
            )
        priced = " (at the batch price where the provider has a batch API)" if batch else ""
        self.stdout.write(f"estimate: {preview.total} requests, ~${preview.cost_usd:.6f} in all{priced}")
        for reason in preview.unavailable:
            self.stderr.write(f"refused at launch: {reason}")

    def _follow(self, run):
        with progress(self, run.total, "Evaluating") as bar:
            while True:
                run.refresh_from_db()
                p = run_progress(run)
                rate = f"{p.rate_per_s:.1f}/s" if p.rate_per_s else "-"
                eta = f"{p.eta_s:.0f}s" if p.eta_s is not None else "-"
                bar.update(p.done, total=p.total, rate=rate, ETA=eta, status=run.status)
                if run.status in (
                    EvalRun.Status.COMPLETED,
                    EvalRun.Status.CANCELLED,
                    EvalRun.Status.PAUSED,
                    EvalRun.Status.FAILED,
                ):
                    break
                time.sleep(1)
        self.stdout.write(f"run {run.pk}: {run.status}; statuses {p.by_status}; cost ${p.cost_usd:.4f}")
        if run.error:
            self.stdout.write(run.error)
