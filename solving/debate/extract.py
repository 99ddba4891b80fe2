"""Per-agent normalization (Debate §3.3.1 step i): one clean final answer per solver output.

A solver emits ``<reasoning>…</reasoning><answer>…</answer>``. A well-formed emitted answer is kept
unchanged. When it is missing, empty or malformed, the answer is re-extracted from the reasoning:
first by the deterministic :func:`extract_final_answer`, then — only if that finds nothing — by an
injected light model (``light_model(reasoning) -> str``), whose reply is itself cleaned the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

AnswerSource = Literal["emitted", "deterministic", "light_model", "none"]
LightModel = Callable[[str], str]

MAX_ANSWER_CHARS = 400  # an "answer" longer than this is reasoning spilled into the answer tag

_TAG = r"<{name}\b[^>]*>(.*?)(?:</{name}\s*>|\Z)"
_PLACEHOLDERS = {
    "",
    "...",
    "…",
    "n/a",
    "na",
    "none",
    "null",
    "unknown",
    "tbd",
    "?",
    "see above",
    "see reasoning",
}


@dataclass(frozen=True)
class SolverOutput:
    """The two blocks of a solver's raw output. ``reasoning`` falls back to the whole text."""

    reasoning: str
    answer: str | None


@dataclass(frozen=True)
class NormalizedAnswer:
    """The answer to vote on, where it came from, and the reasoning to keep as memory."""

    answer: str
    source: AnswerSource
    reasoning: str


def parse_solver_output(raw: str) -> SolverOutput:
    """Split ``raw`` into reasoning and answer; the *last* ``<answer>`` block wins.

    An unclosed ``<answer>`` runs to the end of the text. Without a ``<reasoning>`` block the
    reasoning is the text outside the answer block.
    """
    answers = re.findall(_TAG.format(name="answer"), raw, flags=re.I | re.S)
    reasonings = re.findall(_TAG.format(name="reasoning"), raw, flags=re.I | re.S)
    answer = answers[-1].strip() if answers else None
    if reasonings:
        reasoning = "\n".join(block.strip() for block in reasonings)
    else:
        reasoning = re.sub(_TAG.format(name="answer"), "", raw, flags=re.I | re.S).strip()
    return SolverOutput(reasoning=reasoning, answer=answer)


def is_malformed(answer: str | None) -> bool:
    """Missing, empty, a placeholder, too long, or still holding tags or several lines of prose."""
    if answer is None:
        return True
    text = answer.strip()
    if text.lower().strip(" .") in _PLACEHOLDERS or text.lower() in _PLACEHOLDERS:
        return True
    if len(text) > MAX_ANSWER_CHARS or re.search(r"</?(reasoning|answer)\b", text, re.I):
        return True
    return len([line for line in text.splitlines() if line.strip()]) > 6


def extract_final_answer(text: str, *, option_letters: str | None = None) -> str | None:
    """Deterministically find the final answer in free reasoning, or ``None``.

    Order: the last ``\\boxed{…}`` (or ``\\fbox``); the last "final answer:" / "answer:" line;
    the last "the answer is …" sentence; and, only when ``option_letters`` (e.g. ``"ABCD"``) says
    the problem is multiple choice, the last option letter mentioned as ``option B``, ``(B)`` or
    ``answer is B``.
    """
    for finder in (_last_boxed, _last_answer_line, _last_answer_sentence):
        found = finder(text)
        if found:
            return found
    if option_letters:
        return _last_option_letter(text, option_letters)
    return None


def normalize_agent_answer(
    raw: str, *, option_letters: str | None = None, light_model: LightModel | None = None
) -> NormalizedAnswer:
    """One clean answer for ``raw`` (see the module docstring). ``source='none'`` means abstention."""
    output = parse_solver_output(raw)
    if output.answer is not None and not is_malformed(output.answer):  # None is malformed too
        return NormalizedAnswer(answer=output.answer.strip(), source="emitted", reasoning=output.reasoning)
    found = extract_final_answer(output.reasoning, option_letters=option_letters)
    if found:
        return NormalizedAnswer(answer=found, source="deterministic", reasoning=output.reasoning)
    if light_model is not None:
        reply = light_model(output.reasoning)
        cleaned = _clean_light_reply(reply or "", option_letters)
        if cleaned:
            return NormalizedAnswer(answer=cleaned, source="light_model", reasoning=output.reasoning)
    return NormalizedAnswer(answer="", source="none", reasoning=output.reasoning)


def _clean_light_reply(reply: str, option_letters: str | None) -> str:
    tagged = parse_solver_output(reply).answer
    if tagged is not None and not is_malformed(tagged):
        return tagged
    found = extract_final_answer(reply, option_letters=option_letters)
    if found:
        return found
    text = reply.strip()
    return "" if is_malformed(text) else text


def _last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{…}`` / ``\\fbox{…}`` with balanced braces."""
    starts = [m.end() for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text)]
    for start in reversed(starts):
        depth = 1
        for index in range(start, len(text)):
            depth += (text[index] == "{") - (text[index] == "}")
            if depth == 0:
                content = text[start:index].strip()
                if content:
                    return content
                break
    return None


def _last_answer_line(text: str) -> str | None:
    pattern = r"(?im)^\W*(?:final\s+answer|answer)\s*(?:is)?\s*[:：]\s*(.+?)\s*$"
    matches = [m.group(1).strip(" *`") for m in re.finditer(pattern, text)]
    matches = [m for m in matches if m and not is_malformed(m)]
    return matches[-1].rstrip(".") if matches else None


def _last_answer_sentence(text: str) -> str | None:
    pattern = r"(?i)\b(?:the\s+)?final\s+answer\s+is\s*[:：]?\s*([^\n]+?)\s*(?:\.\s|\.$|$)|\bthe\s+answer\s+is\s*[:：]?\s*([^\n]+?)\s*(?:\.\s|\.$|$)"
    matches = [(m.group(1) or m.group(2)).strip(" *`") for m in re.finditer(pattern, text, flags=re.M)]
    matches = [m for m in matches if m and not is_malformed(m)]
    return matches[-1] if matches else None


def _last_option_letter(text: str, option_letters: str) -> str | None:
    letters = re.escape(option_letters.upper())
    pattern = (
        rf"\b(?i:option|choice)\s*\(?([{letters}])\)?(?![A-Za-z])"
        rf"|\(([{letters}])\)"
        rf"|\b(?i:answer)\s+(?:is\s+)?\(?([{letters}])\)?(?![A-Za-z])"
    )
    matches = [next(g for g in m.groups() if g) for m in re.finditer(pattern, text)]
    return matches[-1].upper() if matches else None
