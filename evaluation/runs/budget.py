"""A run's dollar budget (``options["budget_usd"]``): the chunk executor claims a row only while the run's
spent dollars (its cost counter) plus the estimated cost of its rows in flight (``estimate_usd`` of its
running rows, ``estimate``) plus the row's own estimate stay within the budget. When the next row would pass
it, the run is paused: its unclaimed rows stay pending, the calls in flight end and are stored, and the run
says why in ``error``; raising the budget (``eval_run_budget_set``) and resuming continues it."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db.models import Sum

from audit.services import event_record
from physalign_site.errors import ApplicationError

from ..models import EvalRequest, EvalRun


def budget_of(options: dict[str, Any]) -> Decimal | None:
    value = options.get("budget_usd")
    return None if value in (None, "") else Decimal(str(value))


def budget_parse(value: Any) -> Decimal:
    """A budget as given on a form or the command line: a non-negative dollar amount."""
    try:
        budget = Decimal(str(value))
    except InvalidOperation as exc:
        raise ApplicationError("A budget is an amount in dollars.", code="budget_invalid") from exc
    if not budget.is_finite() or budget < 0:
        raise ApplicationError("A budget is an amount in dollars, at least 0.", code="budget_invalid")
    return budget


def budget_room(run_id: int) -> tuple[Decimal, Decimal, Decimal] | None:
    """(budget, spent, in flight) of a run with a budget, read under the run row's lock (the caller's
    transaction: concurrent chunks claim one after the other); None without a budget or once paused."""
    run = EvalRun.objects.select_for_update().only("status", "options", "cost_usd").get(pk=run_id)
    budget = budget_of(run.options)
    if budget is None:
        return None
    if run.status == EvalRun.Status.PAUSED:
        return budget, Decimal(-1), Decimal(0)  # paused: nothing more is claimed until a resume
    in_flight = EvalRequest.objects.filter(run_id=run_id, status=EvalRequest.Status.RUNNING).aggregate(
        s=Sum("estimate_usd")
    )["s"] or Decimal(0)
    return budget, Decimal(run.cost_usd or 0), Decimal(in_flight)


def budget_pause(
    run_id: int, *, budget: Decimal, spent: Decimal, in_flight: Decimal, next_usd: Decimal
) -> None:
    """Pause the run (in the caller's transaction) with the reason; idempotent."""
    if spent < 0:
        return
    pending = EvalRequest.objects.filter(run_id=run_id, status=EvalRequest.Status.PENDING).count()
    message = (
        f"Paused by its budget: ${spent:.4f} spent + ${in_flight:.4f} in flight + ${next_usd:.4f} for the next "
        f"request would pass the budget of ${budget:.4f}; {pending} requests left pending. Raise the budget "
        "and resume to continue."
    )
    updated = EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.RUNNING).update(
        status=EvalRun.Status.PAUSED, error=message
    )
    if updated:
        event_record(actor=None, verb="eval_run.pause", obj=EvalRun(pk=run_id), after={"reason": message})


def eval_run_budget_set(*, run: EvalRun, budget_usd: Any, actor: Any = None) -> EvalRun:
    """Set (or with None, remove) a run's budget; a paused run then continues on ``eval_run_resume``."""
    options = dict(run.options)
    before = options.get("budget_usd")
    if budget_usd is None:
        options.pop("budget_usd", None)
    else:
        options["budget_usd"] = str(budget_parse(budget_usd))
    EvalRun.objects.filter(pk=run.pk).update(options=options)
    event_record(
        actor=actor,
        verb="eval_run.budget",
        obj=run,
        before={"budget_usd": before},
        after={"budget_usd": options.get("budget_usd")},
    )
    run.refresh_from_db()
    return run
