"""What each role's home page counts. Reads only: opening a home page never writes.

Every figure is one aggregate query (or a few), so the page costs the same at 40 parents as at 986.
The pipeline board follows a parent through the stages of DESIGN §1: imported → Passes 1–4 approved →
compiled → reviewed → signed off (audited) → released → evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from annotation.assignments.selectors import annotator_assigned_work, source_reviews_assigned
from annotation.models import Assignment, ParentProblem
from annotation.selectors import (
    WORK_STATES,
    rejected_passes,
    source_review_queue,
    stale_approvals,
    work_counts,
    work_filter,
)
from evaluation.models import EvalRequest, EvalRun
from physalign_site.count_words import counted, noun
from probes.models import CompileIssue, CompileRun, Probe, Release, ReleaseItem
from review.models import ReviewSlot, Role, Signoff
from review.selectors import DEVELOPMENT, live_probes, my_slots, unclaimed_counts


def _url(name: str, *args: Any, **query: str) -> str:
    url = reverse(name, args=args)
    return f"{url}?{urlencode(query)}" if query else url


@dataclass(frozen=True)
class Figure:
    """A number on a home page, what it counts, and the list behind it."""

    value: int
    label: str
    url: str = ""


# --- annotator ---------------------------------------------------------------------------------------


ASSIGNED_SHOWN = 50  # the home lists this many assigned problems (overdue first, then by due date)


def annotator_home(user: Any, *, today: date) -> dict[str, Any]:
    """The problems assigned to the annotator first (with the pass to do next and the due date), then every
    problem's work state and the rejected passes, as before assignment existed."""
    counts = work_counts()
    problems = "annotation:problem_list"
    assigned = annotator_assigned_work(user=user, today=today)
    return {
        "assigned": assigned.work[:ASSIGNED_SHOWN],
        "assigned_total": len(assigned.work),
        "assigned_overdue": sum(1 for w in assigned.work if w.overdue),
        "assigned_done": assigned.done,
        "figures": [
            Figure(counts[key], WORK_STATES[key][0], _url(problems, work=key)) for key in WORK_STATES
        ],
        "rejected": list(rejected_passes(limit=10)),
    }


# --- source reviewer ---------------------------------------------------------------------------------


def source_reviewer_home(user: Any) -> dict[str, Any]:
    """The submitted passes assigned to the reviewer first (by due date), then the queue's figures and the
    passes waiting longest."""
    queue = source_review_queue()
    return {
        "assigned": list(source_reviews_assigned(user=user)[:ASSIGNED_SHOWN]),
        "waiting": queue.count(),
        "oldest": list(queue[:8]),
        "stale": stale_approvals().count(),
    }


# --- probe reviewer and adjudicator ------------------------------------------------------------------


def reviewer_home(user: Any) -> dict[str, Any]:
    """The reviewer's open slots and what waits in the development queue, per role (the queue page's own
    counts: parents with live probes and no slot yet wait too, their slots are made by the first claim)."""
    slots = my_slots(user)
    counts = unclaimed_counts()
    waiting = {role: counts.get((DEVELOPMENT, role), 0) for role in Role.values}
    return {
        "open_slots": [row for row in slots if row["remaining"]],
        "done_slots": sum(1 for row in slots if not row["remaining"]),
        "waiting": waiting,
    }


# --- admin: assignments ------------------------------------------------------------------------------


def assignment_overview(*, today: date) -> dict[str, Figure]:
    """Problems (not excluded) with nobody assigned in each role, and assignments past their due date, each
    linking to the assignments page filtered to them (two queries)."""
    page = "assignments:page"
    open_problems = ParentProblem.objects.exclude(status=ParentProblem.Status.EXCLUDED)
    roles = {"annotator": "without an annotator", "source_reviewer": "without a source reviewer"}
    counts = open_problems.aggregate(
        **{
            role: Count("pk", filter=~Q(Exists(Assignment.objects.filter(parent=OuterRef("pk"), role=role))))
            for role in roles
        }
    )
    overdue = Assignment.objects.filter(due_date__lt=today).exclude(
        parent__status=ParentProblem.Status.EXCLUDED
    )
    figures = {
        role: Figure(counts[role], noun(counts[role], "problem") + " " + label, _url(page, unassigned=role))
        for role, label in roles.items()
    }
    figures["overdue"] = Figure(overdue.count(), "assignments past their due date", _url(page))
    return figures


# --- admin: the pipeline board -----------------------------------------------------------------------


@dataclass
class Stage:
    key: str
    title: str
    parents: Figure
    probes: Figure | None = None
    blockers: list[Figure] = field(default_factory=list)  # what keeps parents from the next stage
    done: str = ""  # shown when nothing blocks
    note: str = ""  # what the figures alone would mislead about (evaluated parents not in a release)


def pipeline_board() -> list[Stage]:
    """The board's stages in order, each with its parents (and probes) and what keeps them from the next
    stage; a stage nothing has reached says so."""
    live = live_probes()
    stages = [*_annotation_stages(live), *_review_stages(live), *_release_stages()]
    for stage in stages:
        if not stage.parents.value and not stage.blockers:
            stage.done = "Nothing has reached this stage yet."
    return stages


def _blockers(*figures: Figure) -> list[Figure]:
    return [f for f in figures if f.value]


def _annotation_stages(live: QuerySet[Probe]) -> list[Stage]:
    """Imported (blocked by the work states before approval) and Passes 1–4 approved (blocked until compiled)."""
    problems = "annotation:problem_list"
    parent_counts = ParentProblem.objects.aggregate(
        total=Count("pk"), excluded=Count("pk", filter=Q(status=ParentProblem.Status.EXCLUDED))
    )
    work = work_counts()
    not_compiled = (
        ParentProblem.objects.filter(work_filter("approved"))
        .exclude(Exists(live.filter(parent=OuterRef("pk"))))
        .count()
    )
    return [
        Stage(
            "imported",
            "Imported",
            Figure(parent_counts["total"], noun(parent_counts["total"], "parent"), _url(problems)),
            blockers=_blockers(
                Figure(work["to_start"], "to start", _url(problems, work="to_start")),
                Figure(work["in_progress"], "with a pass in draft", _url(problems, work="in_progress")),
                Figure(work["submitted"], "awaiting source review", _url("annotation:source_queue")),
                Figure(work["rejected"], "with a rejected pass", _url(problems, work="rejected")),
                Figure(
                    work["stale"], "with a stale approval", _url("annotation:source_queue") + "#stale-heading"
                ),
                Figure(parent_counts["excluded"], "excluded", _url(problems, status="excluded")),
            ),
            done="Every imported parent has passes 1–4 approved.",
        ),
        Stage(
            "annotated",
            "Passes 1–4 approved",
            Figure(work["approved"], noun(work["approved"], "parent"), _url(problems, work="approved")),
            blockers=_blockers(
                Figure(not_compiled, "approved, not compiled yet", _url("probes:run_list")),
            ),
            done="Every approved parent is compiled.",
        ),
    ]


def _review_stages(live: QuerySet[Probe]) -> list[Stage]:
    """Compiled (blocked by probes awaiting review, unclaimed slots and groups the last compile run blocked),
    Reviewed (blocked by rejections and parents not signed off) and signed off (blocked until exported)."""
    pending = Q(state=Probe.State.PENDING_REVIEW)
    probe_counts = live.aggregate(
        total=Count("pk"),
        pending=Count("pk", filter=pending),
        approved=Count("pk", filter=Q(state=Probe.State.APPROVED)),
        rejected=Count("pk", filter=Q(state=Probe.State.REJECTED)),
        parents=Count("parent", distinct=True),
        parents_pending=Count("parent", distinct=True, filter=pending),
    )
    run = CompileRun.objects.filter(status=CompileRun.Status.SUCCEEDED).order_by("-pk").first()
    blocked = CompileIssue.objects.filter(run=run).exclude(task_id="parent").count() if run else 0
    unclaimed = ReviewSlot.objects.filter(reviewer__isnull=True).count()

    signoffs = list(Signoff.objects.values_list("problem_ids", "release_id"))
    signed_parents = {pid for ids, _ in signoffs for pid in (ids or [])}
    signed_probes = live.filter(parent__problem_id__in=signed_parents).count() if signed_parents else 0
    not_exported = sum(1 for _, release in signoffs if release is None)
    reviewed_parents = probe_counts["parents"] - probe_counts["parents_pending"]
    not_signed = max(reviewed_parents - len(signed_parents), 0)
    return [
        Stage(
            "compiled",
            "Compiled",
            Figure(
                probe_counts["parents"], noun(probe_counts["parents"], "parent"), _url("probes:probe_list")
            ),
            Figure(probe_counts["total"], noun(probe_counts["total"], "probe"), _url("probes:probe_list")),
            blockers=_blockers(
                Figure(
                    probe_counts["pending"],
                    noun(probe_counts["pending"], "probe") + " awaiting review",
                    _url("probes:probe_list", state="pending_review"),
                ),
                Figure(unclaimed, noun(unclaimed, "review slot") + " unclaimed", _url("review:queue")),
                Figure(
                    blocked,
                    noun(blocked, "probe group") + " blocked at compilation",
                    _url("probes:run_detail", run.pk) if run else "",
                ),
            ),
            done="Every compiled probe has a review decision.",
        ),
        Stage(
            "reviewed",
            "Reviewed",
            Figure(reviewed_parents, noun(reviewed_parents, "parent"), _url("review:agreement")),
            Figure(
                probe_counts["approved"] + probe_counts["rejected"],
                noun(probe_counts["approved"] + probe_counts["rejected"], "probe"),
                _url("probes:probe_list", state="approved"),
            ),
            blockers=_blockers(
                Figure(
                    probe_counts["rejected"],
                    noun(probe_counts["rejected"], "probe") + " rejected",
                    _url("probes:probe_list", state="rejected"),
                ),
                Figure(
                    not_signed,
                    noun(not_signed, "reviewed parent") + " not signed off",
                    _url("review:signoff"),
                ),
            ),
            done="Every reviewed parent is signed off.",
        ),
        Stage(
            "signed_off",
            "Audited and signed off",
            Figure(len(signed_parents), noun(len(signed_parents), "parent"), _url("review:signoff")),
            Figure(signed_probes, noun(signed_probes, "probe"), _url("review:audit_list")),
            blockers=_blockers(
                Figure(
                    not_exported, noun(not_exported, "signoff") + " not exported yet", _url("review:signoff")
                )
            ),
            done="Every signoff is exported as a release.",
        ),
    ]


def _release_stages() -> list[Stage]:
    """Released (blocked by releases without a completed evaluation and runs in progress or paused) and
    Evaluated."""
    released = ReleaseItem.objects.filter(release__origin=Release.Origin.EXPORTED).aggregate(
        parents=Count("problem_id", distinct=True), probes=Count("logical_probe_id", distinct=True)
    )
    releases = Release.objects.filter(origin=Release.Origin.EXPORTED).count()
    unevaluated = (
        Release.objects.filter(origin=Release.Origin.EXPORTED)
        .exclude(Exists(EvalRun.objects.filter(release=OuterRef("pk"), status=EvalRun.Status.COMPLETED)))
        .count()
    )
    # per probe, does a completed run hold a request for it (an index probe each), not a distinct count over
    # every request of every run: 76k rows a run at the paper's scale
    in_release = ReleaseItem.objects.filter(
        release__origin=Release.Origin.EXPORTED, problem_id=OuterRef("parent__problem_id")
    )
    evaluated = (
        Probe.objects.filter(
            Exists(EvalRequest.objects.filter(probe=OuterRef("pk"), run__status=EvalRun.Status.COMPLETED))
        )
        .annotate(released=Exists(in_release))
        .aggregate(
            probes=Count("pk"),
            parents=Count("parent", distinct=True),
            unreleased_parents=Count("parent", distinct=True, filter=Q(released=False)),
        )
    )
    runs = EvalRun.objects.filter(status=EvalRun.Status.COMPLETED).count()
    run_states = EvalRun.objects.aggregate(
        active=Count(
            "pk", filter=Q(status__in=[EvalRun.Status.QUEUED, EvalRun.Status.RUNNING, EvalRun.Status.SCORING])
        ),
        paused=Count("pk", filter=Q(status=EvalRun.Status.PAUSED)),  # stopped at its budget: an admin decides
    )
    return [
        Stage(
            "released",
            "Released",
            Figure(released["parents"], noun(released["parents"], "parent"), _url("probes:release_list")),
            Figure(released["probes"], noun(released["probes"], "probe"), _url("probes:release_list")),
            blockers=_blockers(
                Figure(
                    unevaluated,
                    noun(unevaluated, "release") + " without a completed evaluation",
                    _url("evaluation:run_list"),
                ),
                Figure(
                    run_states["active"],
                    noun(run_states["active"], "evaluation run") + " in progress",
                    _url("evaluation:run_list"),
                ),
                Figure(
                    run_states["paused"],
                    noun(
                        run_states["paused"],
                        "evaluation run paused at its budget",
                        "evaluation runs paused at their budget",
                    ),
                    _url("evaluation:run_list"),
                ),
            ),
            done=f"Every release has been evaluated ({counted(releases, 'release')}).",
        ),
        Stage(
            "evaluated",
            "Evaluated",
            Figure(evaluated["parents"], noun(evaluated["parents"], "parent"), _url("evaluation:run_list")),
            Figure(evaluated["probes"], noun(evaluated["probes"], "probe"), _url("evaluation:run_list")),
            blockers=[],
            done=f"{counted(runs, 'completed evaluation run')}.",
            note=_evaluated_note(evaluated["parents"], evaluated["unreleased_parents"], evaluated["probes"]),
        ),
    ]


def _evaluated_note(parents: int, unreleased: int, probes: int) -> str:
    """Evaluation runs may ask about current probes (no release): then more parents are evaluated than
    released, and the board says where they came from."""
    if not unreleased:
        return ""
    return (
        f"{counted(parents, 'parent')} evaluated ({counted(probes, 'probe')}) — {unreleased:,} "
        f"from current probes not yet in a release."
    )
