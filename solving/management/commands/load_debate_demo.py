"""``manage.py load_debate_demo``: an offline debate demo with scripted solvers (Debate Tables 3 and 7).

DEMO SCRIPT — read before trusting any number it prints. The three solvers, the pruner and the selector
are ``scripted`` model configurations whose canned replies were written *from the stored reference
answers* of the demo problems: solver A is right on 70 % of them, B on 60 %, C on 55 %, with errors that
differ, and the pruner says "yes" exactly to the right answers. That admin-only knowledge lives only
in the scripts (``ModelConfig.extra``, visible to admins only); no prompt ever contains it: the scripted
provider merely matches substrings of the public prompt. The demo shows the machinery end to end
(early stop on consensus, pruning and re-solving, selection, cost and call accounting, the comparison
page), not the merit of any real model.

The 20 demo problems are text-only (Level 1) choice and fill-in problems created under the source
``PhysAlign debate demo``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from annotation.demo.solving_problems import (
    SOURCE_NAME,
    DemoProblem,
    demo_problems,
    solving_demo_problems_ensure,
)

__all__ = ["SOURCE_NAME", "DemoProblem", "build_scripts", "debate_demo_load", "demo_problems"]

SOLVERS = ("scripted-solver-a", "scripted-solver-b", "scripted-solver-c")
PRUNER = "scripted-pruner"
SELECTOR = "scripted-selector"
# Debate Table 6 prices (USD per Mtok in / out), so the dollars have realistic proportions.
PRICES = {
    "scripted-solver-a": (5, 30),
    "scripted-solver-b": (2, 12),
    "scripted-solver-c": (5, 25),
    PRUNER: (2, 12),
    SELECTOR: (5, 30),
}

# Round-1 correctness of solvers (A, B, C) over 20 slots: A 14/20, B 12/20, C 11/20. "same" marks two
# solvers sharing one wrong answer (a wrong consensus), so the debate is not always right.
PATTERNS: tuple[tuple[bool, bool, bool, str], ...] = (
    *[(True, True, True, "")] * 8,
    *[(True, True, False, "")] * 3,
    *[(True, False, True, "")] * 2,
    (False, True, True, ""),
    (True, False, False, ""),
    *[(False, False, False, "same")] * 2,
    *[(False, False, False, "")] * 3,
)


def _wrong(answer: str, answer_type: str, options: list[dict[str, str]], k: int) -> str:
    """The k-th (1..3) distinct wrong answer."""
    if answer_type == "choice":
        others = [o["id"] for o in options if o["id"] != answer]
        return others[(k - 1) % len(others)] if others else "Z"
    match = re.search(r"-?\d+(?:\.\d+)?", answer)
    if not match:
        return f"{answer} (variant {k})"
    value = float(match.group(0)) * {1: 2.0, 2: 0.5, 3: 3.0}[k]
    return answer[: match.start()] + f"{value:.3g}" + answer[match.end() :]


def _solution(answer: str, *, correct: bool) -> str:
    reasoning = (
        "Identify the given quantities, apply the relevant law (Newton's second law or energy "
        "conservation), substitute the values with units and simplify. "
        + ("The numbers check out." if correct else "I am fairly confident in this result.")
    )
    return f"<reasoning>{reasoning} So the final answer is \\boxed{{{answer}}}.</reasoning>\n<answer>{answer}</answer>"


def _slot(problem_id: str) -> int:
    return int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16)


def _assign_patterns(problem_ids: list[str]) -> dict[str, tuple[bool, bool, bool, str]]:
    ranked = sorted(problem_ids, key=lambda p: (_slot(p), p))
    return {pid: PATTERNS[n % len(PATTERNS)] for n, pid in enumerate(ranked)}


def build_scripts(parents: list[Any]) -> dict[str, dict[str, Any]]:
    """``extra`` of each scripted config, derived from the stored answers (see the module docstring)."""
    from solving.runs import public_problem, script_key

    scripts: dict[str, list[dict[str, Any]]] = {name: [] for name in (*SOLVERS, PRUNER, SELECTOR)}
    patterns = _assign_patterns([p.problem_id for p in parents])
    for parent in parents:
        text, _ = public_problem(parent)
        pattern = patterns[parent.problem_id]
        options = list(parent.options or [])
        round1 = []
        for index, correct in enumerate(pattern[:3]):
            wrong_k = (2 if index == 0 else 1) if pattern[3] == "same" else index + 1
            round1.append(
                parent.answer if correct else _wrong(parent.answer, parent.answer_type, options, wrong_k)
            )
        any_right = any(pattern[:3])
        for index, name in enumerate(SOLVERS):
            # Re-solving: with a surviving correct peer, A and B adopt the right answer; C keeps its own.
            later = parent.answer if any_right and index < 2 else round1[index]
            for round_number in (2, 3):
                scripts[name].append(
                    {
                        "match": script_key(f"re-solve round {round_number}", text),
                        "outputs": [_solution(later, correct=later == parent.answer)],
                    }
                )
            # Round 1 of the debate and the single-solver prompt share the problem text.
            scripts[name].append(
                {"match": text, "outputs": [_solution(round1[index], correct=round1[index] == parent.answer)]}
            )
        scripts[PRUNER].append(
            {"match": script_key(f"verify: {parent.answer}", text), "outputs": ['{"label": "yes"}']}
        )
    return {
        **{
            name: {
                "responses": scripts[name],
                "default": "<reasoning>No script.</reasoning><answer></answer>",
                "demo_script": True,
            }
            for name in SOLVERS
        },
        PRUNER: {"responses": scripts[PRUNER], "default": '{"label": "no"}', "demo_script": True},
        SELECTOR: {"responses": [], "default": '{"choice": "abstain"}', "demo_script": True},
    }


@dataclass(frozen=True)
class DemoResult:
    parent_ids: list[str]
    single_run_ids: list[int]
    debate_run_id: int | None


def debate_demo_load(*, count: int = 20, launch: bool = True, actor: Any = None) -> DemoResult:
    """Create (or refresh) the demo problems and scripted models; optionally launch the four runs."""
    from models_registry.models import ModelConfig
    from solving.runs import debate_run_create, solve_run_create

    with transaction.atomic():
        parents = solving_demo_problems_ensure(count=count)
        for name, extra in build_scripts(parents).items():
            price_in, price_out = PRICES[name]
            ModelConfig.objects.update_or_create(
                name=name,
                defaults={
                    "provider": "scripted",
                    "model": f"demo-{name}",
                    "extra": extra,
                    "is_active": True,
                    "price_in_per_mtok": Decimal(price_in),
                    "price_out_per_mtok": Decimal(price_out),
                    "max_retries": 0,
                },
            )
    ids = [p.problem_id for p in parents]
    if not launch:
        return DemoResult(ids, [], None)
    singles = [
        solve_run_create(
            kind="single", model=name, parent_ids=ids, name=f"demo single {name}", actor=actor
        ).pk
        for name in SOLVERS
    ]
    debate = debate_run_create(
        solver_names=list(SOLVERS),
        pruner=PRUNER,
        selector=SELECTOR,
        level=1,
        parent_ids=ids,
        name="demo debate (scripted)",
        actor=actor,
    )
    return DemoResult(ids, singles, debate.pk)


class Command(BaseCommand):
    help = (
        "Offline debate demo: 20 text-only problems, three scripted solvers (A 70 %, B 60 %, C 55 % correct), "
        "a scripted pruner and selector; launches one single-solver run per solver and one debate run. "
        "The scripts are derived from the stored answers: a demonstration of the machinery only."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, default=20, help="demo problems (default 20)")
        parser.add_argument("--no-launch", action="store_true", help="only create problems and models")

    def handle(self, *args, count: int, no_launch: bool, **options) -> None:
        result = debate_demo_load(count=count, launch=not no_launch)
        self.stdout.write(f"Demo problems: {len(result.parent_ids)} ({result.parent_ids[0]} …)")
        self.stdout.write(f"Scripted models: {', '.join((*SOLVERS, PRUNER, SELECTOR))}")
        if no_launch:
            self.stdout.write(
                "Launch: manage.py debate --solvers "
                + ",".join(SOLVERS)
                + f" --pruner {PRUNER} --selector {SELECTOR} --level 1 --parents "
                + ",".join(result.parent_ids)
            )
            return
        self.stdout.write(f"Single-solver runs: {result.single_run_ids}; debate run: {result.debate_run_id}")
        self.stdout.write(self.style.SUCCESS("Compare them at /debate/compare/ once the worker is done."))
