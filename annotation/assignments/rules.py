"""The pure rules of assignment (no Django): the even spread, and the pass an annotator takes next.

``spread_evenly`` is the one round robin every caller uses (the page, the API, the services): the problems in
the order given (callers give problem-id order) and the users in the order given, the i-th problem to user
``i mod n``, so 7 problems over 3 users are 3, 2 and 2, the first users taking the extra ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ANNOTATION_PASSES = (1, 2, 3, 4)
SOLUTION_PASS = 5
# a pass in one of these states is the annotator's to work on (a missing pass: not started yet)
ANNOTATOR_STATES = frozenset({"missing", "draft", "rejected"})


def spread_evenly[Item, Assignee](
    items: Sequence[Item], assignees: Sequence[Assignee]
) -> list[tuple[Item, Assignee]]:
    """Pair each item with an assignee, round robin: item ``i`` goes to ``assignees[i % len(assignees)]``.

    The counts differ by at most one, the first assignees taking the remainder. No assignee: a ``ValueError``
    (the callers refuse that case with their own message first)."""
    if not assignees:
        raise ValueError("spread_evenly needs at least one assignee")
    return [(item, assignees[index % len(assignees)]) for index, item in enumerate(items)]


@dataclass(frozen=True)
class NextStep:
    """What an assigned annotator does next on a problem: ``pass_no`` (None: nothing of theirs now) and a
    short label for the home page."""

    pass_no: int | None
    label: str
    done: bool = False


def next_step(states: Mapping[int, str]) -> NextStep:
    """The annotator's next pass from the state of each pass (``missing``, ``draft``, ``rejected``,
    ``submitted``, ``approved`` — fresh — or ``stale``; a pass left out is ``missing``).

    The rule: the lowest of passes 1–4 not started, in draft or rejected; when none is, passes 1–4 wait for the
    source reviewer while any of them is submitted or has a stale approval; once all four are freshly approved,
    Pass 5 (solution steps) is next unless it is submitted or approved too, and then the problem is done."""
    for pass_no in ANNOTATION_PASSES:
        state = states.get(pass_no, "missing")
        if state in ANNOTATOR_STATES:
            return NextStep(pass_no, _label(pass_no, state))
    if any(states.get(n) != "approved" for n in ANNOTATION_PASSES):
        return NextStep(None, "Waiting for source review")
    solution = states.get(SOLUTION_PASS, "missing")
    if solution in ANNOTATOR_STATES:
        return NextStep(SOLUTION_PASS, _label(SOLUTION_PASS, solution))
    if solution in ("submitted", "stale"):
        return NextStep(None, "Pass 5 waiting for source review")
    return NextStep(None, "Done", done=True)


def _label(pass_no: int, state: str) -> str:
    verb = {"missing": "start", "draft": "continue", "rejected": "fix"}[state]
    return f"Pass {pass_no}: {verb}"
