"""Every prompt of a solve run: the single solver's (the original problem only, in a fresh context) and each
debate stage's (solver, pruner, selector, extractor). No prompt contains the parent's answer, its solution or
any probe metadata; the debate solvers read the same problem text as the single solver (``public_problem``).
"""

from __future__ import annotations

from annotation.models import ParentProblem
from kit.canonical import digest
from llm import ImageInput, LLMRequest

from ..debate.pruner import Memory

# ------------------------------------------------------------------------------------------------ single solver

PROMPT_VERSION = "physalign_solve_v1"

SOLVE_SYSTEM = (
    "You are an expert physics problem solver. Solve the problem below from its statement, its "
    "question and its diagram(s). Work carefully and state your final answer exactly as asked."
)
OUTPUT_FORMAT = {
    "choice": (
        "Reason step by step, then give the letter(s) of the correct option(s) as the final answer in "
        "\\boxed{}, e.g. \\boxed{B}; if several options are correct, give all their letters, e.g. "
        "\\boxed{AC}."
    ),
    "fill": (
        "Reason step by step, then give only the final value or expression, with its units, in \\boxed{}, "
        "e.g. \\boxed{2.5\\ \\text{m/s}}."
    ),
    "short": (
        "Write a detailed worked solution: the physical principles used, each step of the reasoning and "
        "the calculations. End with the final answer in \\boxed{}."
    ),
    "calc": (
        "Write a detailed worked solution: the physical principles used, the equations and every step of "
        "the calculation with units. End with the final answer (all requested quantities) in \\boxed{}."
    ),
}
PROMPT_TEMPLATE_SHA256 = digest(
    {
        "version": PROMPT_VERSION,
        "system": SOLVE_SYSTEM,
        "output_format": OUTPUT_FORMAT,
        "sections": ["[Problem]", "[Question]", "[Options]", "[Images]", "[Output format]"],
    }
)


def _parent_images(parent: ParentProblem) -> tuple[ImageInput, ...]:
    images = []
    for img in parent.images.order_by("ordinal"):
        with img.file.open("rb") as handle:
            images.append(ImageInput(handle.read(), img.media_type))
    return tuple(images)


def solve_prompt_text(parent: ParentProblem) -> str:
    """The user text of the solving prompt (public fields only: statement, question, options, image list)."""
    stem, query = (parent.stem or "").strip(), (parent.query or "").strip()
    sections: list[tuple[str, str]] = []
    if stem or query:
        if stem:
            sections.append(("[Problem]", stem))
        if query:
            sections.append(("[Question]", query))
    else:
        sections.append(("[Problem]", (parent.raw_question or "").strip()))
    if parent.options:
        lines = [f"{o.get('id', '')}. {o.get('text', '')}".rstrip() for o in parent.options]
        sections.append(("[Options]", "\n".join(lines)))
    image_ids = list(parent.images.order_by("ordinal").values_list("image_id", flat=True))
    if image_ids:
        sections.append(
            (
                "[Images]",
                "\n".join(f"{image_id}: attached image {n}" for n, image_id in enumerate(image_ids, start=1)),
            )
        )
    sections.append(("[Output format]", OUTPUT_FORMAT.get(parent.answer_type, OUTPUT_FORMAT["fill"])))
    return "\n\n".join(f"{title}\n{body}" for title, body in sections)


def build_solve_request(parent: ParentProblem, *, request_id: str = "") -> LLMRequest:
    """The solving request of a parent: a fresh context with the original problem only and its images."""
    return LLMRequest(
        system=SOLVE_SYSTEM,
        user=solve_prompt_text(parent),
        images=_parent_images(parent),
        request_id=request_id or f"solve:{parent.problem_id}",
    )


def public_problem(parent: ParentProblem) -> tuple[str, tuple[ImageInput, ...]]:
    """The original problem as a solver may see it (text and images), without any answer format section.

    Reuses the single-solver request builder, so the debate and single solvers read the same problem.
    """
    request = build_solve_request(parent)
    text = request.user
    marker = text.find("[Output format]")
    if marker >= 0:
        text = text[:marker]
    return text.strip(), tuple(request.images)


# ------------------------------------------------------------------------------------------------ debate stages

SOLVER_SYSTEM = (
    "You are an expert physics problem solver. Solve the problem carefully from the information given. "
    "Use only the values, labels and relations stated in the problem (and its figure, if any); do not invent "
    "missing data."
)


PRUNER_SYSTEM = (
    "You are a strict physics grader. You judge whether one candidate solution is fully correct, paying "
    "particular attention to misreadings of the figure (wrong topology, swapped labels, misread values)."
)


SELECTOR_SYSTEM = (
    "You are a physics expert choosing the most reliable of several candidate solutions to one problem."
)


EXTRACTOR_SYSTEM = "You extract the final answer from a physics solution. Do not solve the problem again."


_ANSWER_RULES = (
    "[Rules]\n"
    "- Reason step by step inside <reasoning>…</reasoning>, then give only the final answer inside "
    "<answer>…</answer>.\n"
    "- Multiple choice: the answer is the option letter(s) only, e.g. <answer>B</answer> or <answer>AC</answer>; "
    "never the option's value.\n"
    "- Otherwise: the final value with its SI unit (e.g. <answer>4.9 m/s^2</answer>); for several parts, "
    "label them: <answer>a. …; b. …</answer>.\n"
)


_SOLVER_FORMAT = "[Output format]\n<reasoning><text></reasoning>\n<answer><text></answer>"


def script_key(stage: str, problem_text: str) -> str:
    """The contiguous head of every prompt: ``[Stage] …`` then the problem. Scripted models match on it.

    The problem text is ``build_solve_request``'s (its ``[Problem]``/``[Question]``/``[Options]`` sections)
    or the front-end's reconstruction. ``stage`` is ``"solve round 1"``, ``"re-solve round 2"`` …, ``"verify: <candidate answer>"`` or
    ``"select"``.
    """
    text = problem_text if problem_text.startswith("[Problem]") else f"[Problem]\n{problem_text}"
    return f"[Stage] {stage}\n{text}"


def _figure_block(svg: str | None) -> str:
    return f"\n[Figure as SVG]\n{svg}\n" if svg else ""


def solver_prompt(problem_text: str, *, round_number: int, peers: tuple[Memory, ...], svg: str | None) -> str:
    """Round 1 (Debate C.6) and re-solving (C.7, only the surviving peer memories)."""
    if round_number == 1:
        head = script_key("solve round 1", problem_text)
        context = ""
    else:
        head = script_key(f"re-solve round {round_number}", problem_text)
        if peers:
            shown = "\n\n".join(
                f"Solution {i} (answer: {peer.answer or 'none'}):\n{peer.reasoning.strip()}"
                for i, peer in enumerate(peers, start=1)
            )
            context = (
                "\n[Peer solutions]\nThese earlier solutions were checked by a verifier and kept as possibly "
                "reliable. They may still contain mistakes: re-derive the result yourself and use them only "
                f"as hints.\n\n{shown}\n"
            )
        else:
            context = (
                "\n[Peer solutions]\nEvery earlier solution was judged unreliable; solve the problem "
                "again from scratch.\n"
            )
    return f"{head}\n{_figure_block(svg)}{context}\n{_ANSWER_RULES}\n{_SOLVER_FORMAT}"


def pruner_prompt(problem_text: str, memory: Memory, *, svg: str | None) -> str:
    """The pruning prompt (Debate C.8): one verdict per candidate memory."""
    head = script_key(f"verify: {memory.answer or 'none'}", problem_text)
    return (
        f"{head}\n{_figure_block(svg)}\n[Candidate solution]\n{memory.reasoning.strip()}\n\n"
        f"[Candidate final answer]\n{memory.answer or '(none)'}\n\n"
        "[Question]\nIs this candidate solution fully correct? Answer yes, no, or not sure.\n\n"
        '[Output format]\n{"label": "<one of: yes | no | not sure>"}'
    )


def selector_prompt(problem_text: str, memories: tuple[Memory, ...], *, svg: str | None) -> str:
    """The final selection step (Debate Table 2): pick the most reliable final-round candidate."""
    shown = "\n\n".join(
        f"Candidate {i} (answer: {memory.answer or 'none'}):\n{memory.reasoning.strip()}"
        for i, memory in enumerate(memories, start=1)
    )
    choices = " | ".join(str(i) for i in range(1, len(memories) + 1))
    return (
        f"{script_key('select', problem_text)}\n{_figure_block(svg)}\n[Candidates]\n{shown}\n\n"
        "[Question]\nWhich candidate is most reliable? Reply with its number, or abstain if none is.\n\n"
        f'[Output format]\n{{"choice": "<one of: {choices} | abstain>"}}'
    )


def extractor_prompt(reasoning: str) -> str:
    """Per-agent normalization fallback (Debate §3.3.1 i): the light model reads only the reasoning."""
    return (
        "[Stage] extract\n[Solution]\n"
        + reasoning.strip()
        + "\n\n[Question]\nWhat is the final answer of this "
        "solution? Give only the option letter(s), or the value with its unit.\n\n"
        "[Output format]\n<answer><text></answer>"
    )
