"""The staged demo (``load_demo --stage``, what ``make run`` loads): every role finds work on its first login.

On top of the demo problems, with the app's own services and the demo logins as the actors:

1. **Source review work** (annotation): four more generated problems with Passes 1–2 approved and Passes 3–4
   submitted, one Pass 3 rejected with a note (``annotation.demo.review_work``).
2. **Probes**: one compile run over every approved parent (seed 2027).
3. **A signed release**: ``probe_reviewer`` (primary) and ``probe_reviewer2`` (secondary) review the first
   development parents blind-first and approve them; ``admin`` signs them off (individual mode, the six
   confirmations) and exports the release, which validates (its review proof and signoff verify).
4. **Review work waiting**: on the next parent the two reviewers disagree on one probe, so an adjudicator slot
   opens; then each of ``probe_reviewer``, ``probe_reviewer2`` and ``adjudicator`` holds one claimed slot with
   nothing answered yet (they may give it back), and the other development parents wait in the queue.
5. **A finished evaluation run** on that release: the four simulated demo models (offline, no faults), Base and
   +GT, run in this process, so the results page shows values with bootstrap intervals, not bounds.
6. **A finished debate run** (solving app): the three demo solvers over the text-only debate problems.
7. **Double annotation**: ``annotator2`` annotates a seeded sample of six approved demo parents a second time,
   simulated by ``annotation.agreement.perturb`` (boxes shifted, one text label dropped, one unit wrong), so the
   agreement page and curation have both annotations to compare.

Each step is skipped when its result is already there, so staging twice changes nothing; the report says what
each step did or why it was skipped.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from celery import current_app
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.demo.review_work import REVIEW_WORK_COUNT, REVIEW_WORK_SEED, write_review_work_workspace
from annotation.demo.solving_problems import SOURCE_NAME
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem
from evaluation.models import EvalRun
from evaluation.runs import eval_run_create, eval_run_dispatch
from models_registry.demo import DEMO_SOLVERS
from physalign_site.errors import ApplicationError
from probes.models import CompileRun, Probe, Release
from probes.release_store import releases_root
from probes.services import compile_run_create, compile_run_execute
from review import services as review
from review.models import CONFIRMATION_KEYS, SIGNOFF_KEYS, BlindAnswer, ReviewSlot, Role, Signoff
from review.selectors import slot_work
from solving.models import SolveRun
from solving.runs import debate_run_create, solve_run_dispatch

RELEASED_PARENTS = 8  # development parents reviewed, signed off and released (fewer on a small demo)
SIGNOFF_EVIDENCE = (
    "Demo staging (load_demo --stage): blind-first reviews by probe_reviewer and probe_reviewer2."
)
EVAL_RUN_NAME = "Demo evaluation: simulated models on the demo release"
EVAL_MODELS = ("sim-careful", "sim-packet-reliant", "sim-first-option", "sim-sloppy")
EVAL_CONDITIONS = ("raw", "gold")
DEBATE_RUN_NAME = "Demo debate: three simulated solvers"
DISPUTE_NOTE = "[ownership doubt] the owner named by the target is not the only reading of the diagram"


@dataclass
class StageReport:
    lines: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.lines.append(line)


def demo_stage(*, progress: Callable[[str], None] | None = None) -> StageReport:
    """Stage the demo (the module's steps, in order); each step is skipped when its result exists."""
    report = StageReport()
    say = report.say if progress is None else _tee(report, progress)
    users = _demo_users()
    release: list[Release | None] = [None]

    def step_release() -> str:
        release[0], line = _stage_release(users)
        return line

    steps: list[Callable[[], str]] = [
        _stage_source_review_work,
        _stage_probes,
        step_release,
        lambda: _stage_review_work(users),
        lambda: _stage_evaluation(release[0], users["admin"]),
        lambda: _stage_debate(users["admin"]),
        lambda: _stage_double_annotation(users["admin"]),
    ]
    with _inline_tasks():
        for step in steps:
            started = time.perf_counter()
            line = step()
            say(f"{line} ({time.perf_counter() - started:.1f} s)")
    return report


def _tee(report: StageReport, progress: Callable[[str], None]) -> Callable[[str], None]:
    def say(line: str) -> None:
        report.say(line)
        progress(line)

    return say


def _demo_users() -> dict[str, Any]:
    names = ("admin", "probe_reviewer", "probe_reviewer2", "adjudicator")
    found = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        raise ApplicationError(
            f"Staging the demo needs the demo logins ({', '.join(missing)} missing): run load_demo without "
            f"--no-users.",
            code="demo_users_missing",
        )
    return found


@contextmanager
def _inline_tasks() -> Iterator[None]:
    """Run every queued task (compile, evaluation and debate chunks) here, before ``make run`` starts its
    worker: the staged runs are finished when the server starts."""
    before = current_app.conf.task_always_eager
    trace = logging.getLogger(
        "celery.app.trace"
    )  # one "succeeded" line per chunk: noise in make run's output
    level = trace.level
    current_app.conf.task_always_eager = True
    trace.setLevel(logging.WARNING)
    try:
        yield
    finally:
        current_app.conf.task_always_eager = before
        trace.setLevel(level)


# --- 1. source review work -------------------------------------------------------------------------------------


def _stage_source_review_work() -> str:
    prefix = f"demo_{REVIEW_WORK_SEED}_"
    if ParentProblem.objects.filter(problem_id__startswith=prefix).exists():
        return f"Source review work: already there ({prefix}… problems), left as it is."
    with tempfile.TemporaryDirectory() as tmp:
        write_review_work_workspace(Path(tmp) / "ws")
        result = import_kit_workspace(workspace=Path(tmp) / "ws")
    if not result.succeeded:
        raise ApplicationError(f"Source review work: {result.summary()}", code="demo_stage_failed")
    return (
        f"Source review work: {REVIEW_WORK_COUNT} problems with Passes 1–2 approved and 3–4 submitted "
        f"(one Pass 3 rejected with a note)."
    )


# --- 2. probes -------------------------------------------------------------------------------------------------


def _stage_probes() -> str:
    live = Probe.objects.exclude(state=Probe.State.SUPERSEDED)
    if live.exists():
        return f"Probes: {live.count()} compiled already, no new compile run."
    run = compile_run_execute(run_id=compile_run_create(actor=None, seed=2027, enqueue=False).pk)
    if run.status != CompileRun.Status.SUCCEEDED:
        raise ApplicationError(f"Compile run {run.pk} ended {run.status}.", code="demo_stage_failed")
    return f"Probes: compile run {run.pk} made {live.count()} probes of {live.values('parent').distinct().count()} parents."


# --- 3. reviews, signoff and the release ----------------------------------------------------------------------


def _gold_blind(probe: Probe) -> review.BlindAnswerIn:
    """The blind answer a careful reviewer gives: the binding and readings the probe asks for."""
    return review.BlindAnswerIn(
        binding=list(probe.key.gold_aliases),
        read={r["anchor_alias"]: r["expected"] for r in probe.key.key["read_targets"]},
    )


def _approval(probe: Probe) -> review.DecisionIn:
    observations = probe.key.key["packet_plan"]["observation_ids"]
    return review.DecisionIn(
        status="approved",
        severity="none",
        confirmations={key: True for key in CONFIRMATION_KEYS},
        packet_state="approved_nonempty" if observations else "approved_empty",
        packet_empty_reason="" if observations else "no_independent_readable_primitive",
    )


def _rejection(probe: Probe) -> review.DecisionIn:
    return review.DecisionIn(
        status="rejected", severity="serious", confirmations={}, packet_state="rejected", note=DISPUTE_NOTE
    )


def _review_slot(
    slot: ReviewSlot, user: Any, decide: Callable[[Probe], review.DecisionIn] = _approval
) -> None:
    """Strict blind order: every probe answered blind, then each target revealed and decided."""
    work = slot_work(slot)
    for probe in work:
        review.review_submit_blind(slot=slot, probe=probe, reviewer=user, given=_gold_blind(probe))
    for probe in work:
        review.review_decide(slot=slot, probe=probe, reviewer=user, given=decide(probe))


def _stage_release(users: dict[str, Any]) -> tuple[Release | None, str]:
    done = Signoff.objects.filter(evidence_ref=SIGNOFF_EVIDENCE).select_related("release").first()
    if done is not None and done.release is not None:
        return done.release, f"Release: {done.release.release_id} (signoff {done.pk}) already there."
    if done is not None or ReviewSlot.objects.filter(reviewer__isnull=False).exists():
        return None, "Release: not staged, reviews were already under way (the demo is not fresh)."
    development = Probe.objects.filter(split=Probe.Split.DEVELOPMENT).values("parent").distinct().count()
    if development < 3:
        return None, (
            f"Release: not staged, {development} development parents (it takes 3: released, disputed, waiting)."
        )
    with transaction.atomic():
        for _ in range(min(RELEASED_PARENTS, development - 2)):  # two left: a dispute and a claimed slot
            primary = review.review_claim(
                reviewer=users["probe_reviewer"], role=Role.PRIMARY, context=review.DEVELOPMENT
            )
            secondary = review.review_claim(
                reviewer=users["probe_reviewer2"], role=Role.SECONDARY, context=review.DEVELOPMENT
            )
            _review_slot(primary, users["probe_reviewer"])
            _review_slot(secondary, users["probe_reviewer2"])
        signoff = review.signoff_create(
            actor=users["admin"],
            mode=Signoff.Mode.INDIVIDUAL,
            assessment=None,
            confirmations={key: True for key in SIGNOFF_KEYS},
            evidence_ref=SIGNOFF_EVIDENCE,
        )
        output = releases_root() / f"signoff-{signoff.pk}-demo"
        shutil.rmtree(output, ignore_errors=True)  # a leftover of an interrupted staging, never a release
        release = review.signoff_export(signoff=signoff, output=output, actor=users["admin"])
    return release, (
        f"Release: {release.release_id} signed off by admin ({len(signoff.problem_ids)} parents reviewed by "
        f"probe_reviewer and probe_reviewer2), exported to {output}."
    )


# --- 4. review work waiting -----------------------------------------------------------------------------------


def _stage_review_work(users: dict[str, Any]) -> str:
    holders = ("probe_reviewer", "probe_reviewer2", "adjudicator")
    open_slots = ReviewSlot.objects.filter(
        reviewer__username__in=holders, context=review.DEVELOPMENT
    ).exclude(pk__in=BlindAnswer.objects.values("slot"))
    if open_slots.exists() or ReviewSlot.objects.filter(role=Role.ADJUDICATOR).exists():
        return "Review work: already waiting (claimed slots or a dispute exist), left as it is."
    try:
        with transaction.atomic():
            primary = review.review_claim(
                reviewer=users["probe_reviewer"], role=Role.PRIMARY, context=review.DEVELOPMENT
            )
            secondary = review.review_claim(
                reviewer=users["probe_reviewer2"], role=Role.SECONDARY, context=review.DEVELOPMENT
            )
            disputed = Probe.objects.get(logical_probe_id=primary.blind_first_probe_id)
            _review_slot(primary, users["probe_reviewer"])
            _review_slot(
                secondary,
                users["probe_reviewer2"],
                lambda p: _rejection(p) if p.pk == disputed.pk else _approval(p),
            )
            adjudication = review.review_claim(
                reviewer=users["adjudicator"], role=Role.ADJUDICATOR, context=review.DEVELOPMENT
            )
            mine = review.review_claim(
                reviewer=users["probe_reviewer"], role=Role.PRIMARY, context=review.DEVELOPMENT
            )
            theirs = review.review_claim(
                reviewer=users["probe_reviewer2"], role=Role.SECONDARY, context=review.DEVELOPMENT
            )
    except ApplicationError as exc:
        return f"Review work: not staged ({exc.message})."
    return (
        f"Review work: adjudicator holds the dispute on {adjudication.parent.problem_id} "
        f"({disputed.logical_probe_id}); probe_reviewer holds {mine.parent.problem_id} (primary), "
        f"probe_reviewer2 holds {theirs.parent.problem_id} (secondary); the other development parents wait."
    )


# --- 5. evaluation --------------------------------------------------------------------------------------------


def _stage_evaluation(release: Release | None, admin: Any) -> str:
    found = EvalRun.objects.filter(name=EVAL_RUN_NAME).first()
    if found is not None:
        return f"Evaluation: run {found.pk} already there ({found.status})."
    if release is None:
        return "Evaluation: not staged, no demo release to evaluate."
    run = eval_run_create(
        model_names=list(EVAL_MODELS),
        conditions=list(EVAL_CONDITIONS),
        release=release,
        name=EVAL_RUN_NAME,
        actor=admin,
        start=False,
    )
    eval_run_dispatch(run_id=run.pk)  # eager: every chunk and the scoring run here
    run.refresh_from_db()
    if run.status != EvalRun.Status.COMPLETED:
        raise ApplicationError(f"Evaluation run {run.pk} ended {run.status}.", code="demo_stage_failed")
    return (
        f"Evaluation: run {run.pk} on {release.release_id} completed, {run.total} requests "
        f"({', '.join(EVAL_MODELS)} × Base, +GT)."
    )


# --- 6. debate ------------------------------------------------------------------------------------------------


def _stage_debate(admin: Any) -> str:
    found = SolveRun.objects.filter(name=DEBATE_RUN_NAME).first()
    if found is not None:
        return f"Debate: run {found.pk} already there ({found.status})."
    parents = list(
        ParentProblem.objects.filter(source__name=SOURCE_NAME)
        .order_by("problem_id")
        .values_list("problem_id", flat=True)
    )
    if not parents:
        return "Debate: not staged, no debate demo problem."
    run = debate_run_create(
        solver_names=list(DEMO_SOLVERS), parent_ids=parents, name=DEBATE_RUN_NAME, actor=admin, enqueue=False
    )
    solve_run_dispatch(run_id=run.pk)  # eager: every problem debated here
    run.refresh_from_db()
    if run.status != SolveRun.Status.COMPLETED:
        raise ApplicationError(f"Debate run {run.pk} ended {run.status}.", code="demo_stage_failed")
    return f"Debate: run {run.pk} completed over {run.total} problems ({' + '.join(DEMO_SOLVERS)})."


# --- 7. double annotation --------------------------------------------------------------------------------------

DOUBLE_SAMPLE = 6
SECOND_ANNOTATOR = "annotator2"


def _stage_double_annotation(admin: Any) -> str:
    """A seeded sample of parents whose Passes 1–3 are approved, annotated a second time by ``annotator2`` as
    the seeded perturbation of the first annotation (what a careless second annotator does), each pass saved
    and marked done through the second annotator's own services."""
    from annotation.agreement.perturb import perturbation
    from annotation.double.services import (
        INDEPENDENT_PASSES,
        double_sample_request,
        independent_save,
        independent_submit,
    )
    from annotation.models import PassDocument, SecondAnnotation, Source

    if SecondAnnotation.objects.exists():
        return f"Double annotation: {SecondAnnotation.objects.count()} parents double-annotated already."
    second = get_user_model().objects.filter(username=SECOND_ANNOTATOR).first()
    if second is None:
        return f"Double annotation: skipped ({SECOND_ANNOTATOR} missing: run load_demo without --no-users)."
    approved = (
        PassDocument.objects.filter(pass_no__in=INDEPENDENT_PASSES, status=PassDocument.Status.APPROVED)
        .values("parent__source_id", "parent_id")
        .order_by()
    )
    per_parent: dict[int, int] = {}
    sources: dict[int, set[int]] = {}
    for row in approved:
        per_parent[row["parent_id"]] = per_parent.get(row["parent_id"], 0) + 1
        sources.setdefault(row["parent__source_id"], set()).add(row["parent_id"])
    complete = {s: {p for p in ps if per_parent[p] == len(INDEPENDENT_PASSES)} for s, ps in sources.items()}
    source_id = max(complete, key=lambda s: (len(complete[s]), -s), default=None)
    if source_id is None or not complete[source_id]:
        return "Double annotation: skipped (no parent with Passes 1–3 approved)."
    source = Source.objects.get(pk=source_id)
    sample = double_sample_request(
        source=source,
        annotator_ids=[second.pk],
        actor=admin,
        count=min(DOUBLE_SAMPLE, len(complete[source_id])),
        seed=2027,
        among=sorted(complete[source_id]),
    )
    done = 0
    for index, pair in enumerate(sample.parents.select_related("parent").order_by("parent__problem_id")):
        first = dict(
            pair.parent.passes.filter(pass_no__in=INDEPENDENT_PASSES).values_list("pass_no", "document")
        )
        documents = perturbation(first, seed=2027 + index).documents
        for pass_no in INDEPENDENT_PASSES:
            independent_save(
                second=pair, pass_no=pass_no, document=documents[pass_no], actor=second, expected_version=None
            )
            try:
                independent_submit(second=pair, pass_no=pass_no, actor=second)
                done += 1
            except ApplicationError:
                pass  # left as a draft with its issues, as a real second annotator might
    parents = sample.parents.count()
    return (
        f"Double annotation: {SECOND_ANNOTATOR} annotated {parents} parents of {source.name} a second time "
        f"(simulated: boxes shifted, one label dropped, one unit wrong; {done} of {parents * 3} passes done)."
    )
