"""The solving demo's text-only problems: 20 deterministic choice and fill-in problems (Level 1), so solving
and debate runs get a SolveAcc scored by script, with no expert grading. ``load_demo`` creates them on
every fresh install; ``load_debate_demo`` adds its scripted solvers on top."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotation.models import ParentProblem, Source

SOURCE_NAME = "PhysAlign debate demo"


@dataclass(frozen=True)
class DemoProblem:
    problem_id: str
    stem: str
    query: str
    options: list[dict[str, str]]
    answer: str
    answer_type: str


def demo_problems(count: int = 20) -> list[DemoProblem]:
    """Deterministic text-only physics problems: even ones fill-in (value with unit), odd ones choice."""
    problems = []
    for i in range(count):
        mass, accel = 1.0 + 0.5 * i, 2.0 + 0.25 * i
        if i % 2 == 0:
            force = mass * accel
            problems.append(
                DemoProblem(
                    problem_id=f"debate_demo_{i:02d}",
                    stem=f"A block of mass {mass:.1f} kg on a frictionless table is pushed so that it accelerates at "
                    f"{accel:.2f} m/s^2.",
                    query="What is the magnitude of the net horizontal force on the block?",
                    options=[],
                    answer=f"{force:.3g} N",
                    answer_type="fill",
                )
            )
        else:
            height = 5.0 + i
            speed = (2 * 9.8 * height) ** 0.5
            values = [speed, speed / 2, speed * 2, speed * 1.5]
            order = [(i + k) % 4 for k in range(4)]
            letters = "ABCD"
            options = [{"id": letters[n], "text": f"{values[j]:.1f} m/s"} for n, j in enumerate(order)]
            correct = letters[order.index(0)]
            problems.append(
                DemoProblem(
                    problem_id=f"debate_demo_{i:02d}",
                    stem=f"A stone is dropped from rest from a height of {height:.1f} m. Ignore air resistance and take "
                    "g = 9.8 m/s^2.",
                    query="With what speed does it reach the ground?",
                    options=options,
                    answer=correct,
                    answer_type="choice",
                )
            )
    return problems


@transaction.atomic
def solving_demo_problems_ensure(*, count: int = 20) -> list[ParentProblem]:
    """Create or refresh the demo problems under the source ``PhysAlign debate demo``; same count → same rows."""
    source, _ = Source.objects.get_or_create(name=SOURCE_NAME, defaults={"license": "CC0 (generated demo)"})
    parents = []
    for problem in demo_problems(count):
        parent, _ = ParentProblem.objects.update_or_create(
            problem_id=problem.problem_id,
            defaults={
                "source": source,
                "source_split": "demo",
                "source_sample_id": problem.problem_id,
                "language": "en",
                "stem": problem.stem,
                "query": problem.query,
                "raw_question": f"{problem.stem} {problem.query}",
                "options": problem.options,
                "answer": problem.answer,
                "answer_type": problem.answer_type,
                "domain": "mechanics",
            },
        )
        parents.append(parent)
    return parents
