"""The debate loop (Debate §3.3, Table 2), pure and synchronous over injected callables.

1. Round 1: every solver answers independently; each output is normalized (``extract``).
2. Aggregation: value-equivalence voting (``canonical.vote``); a strict majority stops the debate.
3. Pruning: the pruner labels every memory of the last round; the mask keeps the reliable ones.
4. Re-solving: every solver answers again seeing only the surviving memories (none if all were
   masked); back to 2, for at most ``max_resolve_rounds`` re-solve rounds.
5. Selection: without a majority after the last round, the selector picks one final-round
   candidate; if it abstains, the designated solver's answer is final.

With a single solver (Level 5, §3.3.3) there is one pass, no canonicalizer, pruner or selection.
Solvers are called in their given order, so the transcript is deterministic given the callables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from solving.debate.canonical import DEFAULT_REL_TOL, Canonical, Vote, canonicalize, render, vote
from solving.debate.extract import AnswerSource, LightModel, normalize_agent_answer
from solving.debate.pruner import Label, Memory, apply_mask, parse_label


@dataclass(frozen=True)
class SolveRequest:
    """What a solver is asked: its name, the round (1-based) and the peer memories it may read."""

    solver: str
    round: int
    peers: tuple[Memory, ...]


Solver = Callable[[SolveRequest], str]  # raw output, ideally <reasoning>…</reasoning><answer>…</answer>
Pruner = Callable[[Memory], str]  # raw verdict text for one memory
Selector = Callable[[tuple[Memory, ...]], str | None]  # raw choice: "2", "Solver 2", a name, or None
Decision = Literal["consensus", "selection", "default_solver", "single_solver"]


@dataclass(frozen=True)
class DebateConfig:
    """Ablation switches and limits. ``default_solver=None`` designates the first solver."""

    max_resolve_rounds: int = 2
    strict_pruning: bool = True
    pruning: bool = True
    value_voting: bool = True
    rel_tol: float = DEFAULT_REL_TOL
    default_solver: str | None = None
    option_letters: str | None = None


@dataclass(frozen=True)
class Turn:
    round: int
    solver: str
    peers: tuple[str, ...]
    raw_output: str
    answer: str
    answer_source: AnswerSource


@dataclass(frozen=True)
class PruneVerdict:
    """The pruner's verdict, before re-solving round ``round``, on ``solver``'s previous memory."""

    round: int
    solver: str
    raw_output: str
    label: Label
    kept: bool


@dataclass(frozen=True)
class RoundVote:
    round: int
    answers: tuple[str, ...]
    vote: Vote


@dataclass(frozen=True)
class Selection:
    raw_output: str | None
    chosen: str | None  # solver name the selector picked; None when it abstained


@dataclass(frozen=True)
class CallCounts:
    solver: int = 0
    normalizer: int = 0
    pruner: int = 0
    selector: int = 0

    @property
    def total(self) -> int:
        return self.solver + self.normalizer + self.pruner + self.selector


@dataclass(frozen=True)
class Transcript:
    """Everything that happened, in order, and the final answer (``final_rendered`` is graded)."""

    solvers: tuple[str, ...]
    turns: tuple[Turn, ...]
    prunes: tuple[PruneVerdict, ...]
    votes: tuple[RoundVote, ...]
    selection: Selection | None
    rounds: int
    decided_by: Decision
    final_solver: str | None
    final_answer: str
    final_canonical: Canonical | None
    final_rendered: str
    calls: CallCounts


@dataclass
class _Counter:
    counts: dict[str, int] = field(
        default_factory=lambda: {"solver": 0, "normalizer": 0, "pruner": 0, "selector": 0}
    )

    def wrap[R](self, kind: str, function: Callable[..., R]) -> Callable[..., R]:
        def counted(*args: Any) -> R:
            self.counts[kind] += 1
            return function(*args)

        return counted

    def frozen(self) -> CallCounts:
        return CallCounts(**self.counts)


def run_debate(
    solvers: Mapping[str, Solver],
    *,
    pruner: Pruner | None = None,
    selector: Selector | None = None,
    normalizer: LightModel | None = None,
    config: DebateConfig | None = None,
) -> Transcript:
    """Run the debate. ``pruner`` is required when there are several solvers and pruning is on.

    Raises ``ValueError`` for no solvers or an unknown ``default_solver``. Exceptions raised by
    the callables propagate: retrying is the caller's business.
    """
    config = config or DebateConfig()
    names = tuple(solvers)
    if not names:
        raise ValueError("at least one solver is required")
    default = config.default_solver or names[0]
    if default not in solvers:
        raise ValueError(f"unknown default solver {default!r}")
    if len(names) > 1 and config.pruning and config.max_resolve_rounds > 0 and pruner is None:
        raise ValueError("a pruner is required for re-solve rounds")
    counter = _Counter()
    normalize = counter.wrap("normalizer", normalizer) if normalizer else None
    if len(names) == 1:
        return _single_solver(names[0], counter.wrap("solver", solvers[names[0]]), normalize, config, counter)
    debate = _Debate(
        names=names,
        solvers={name: counter.wrap("solver", solver) for name, solver in solvers.items()},
        pruner=counter.wrap("pruner", pruner) if pruner else None,
        normalizer=normalize,
        config=config,
    )
    return debate.run(default, counter.wrap("selector", selector) if selector else None, counter)


def parse_selection(text: str | None, names: Sequence[str]) -> str | None:
    """The solver a selector reply names: a solver name, or a 1-based number; ``None`` = abstain.

    The last mention wins; "abstain", "none" or "cannot" with no mention is an abstention.
    """
    if not text:
        return None
    alternatives = [re.escape(name) for name in sorted(names, key=len, reverse=True)]
    pattern = r"(?<![\w])(" + "|".join([*alternatives, r"\d+"]) + r")(?![\w])"
    for token in reversed(re.findall(pattern, text, flags=re.I)):
        for name in names:
            if token.lower() == name.lower():
                return name
        if token.isascii() and token.isdigit() and len(token) <= 3 and 1 <= int(token) <= len(names):
            return names[int(token) - 1]
    return None


@dataclass
class _Debate:
    names: tuple[str, ...]
    solvers: Mapping[str, Solver]
    pruner: Pruner | None
    normalizer: LightModel | None
    config: DebateConfig
    turns: list[Turn] = field(default_factory=list)
    prunes: list[PruneVerdict] = field(default_factory=list)
    votes: list[RoundVote] = field(default_factory=list)

    def run(self, default: str, selector: Selector | None, counter: _Counter) -> Transcript:
        memories = self._solve_round(1, peers=())
        round_vote = self._vote(1, memories)
        last_round = 1
        for round_number in range(2, 2 + self.config.max_resolve_rounds):
            if round_vote.vote.has_majority:
                break
            peers = self._prune(round_number, memories)
            memories = self._solve_round(round_number, peers=peers)
            round_vote = self._vote(round_number, memories)
            last_round = round_number
        if round_vote.vote.has_majority:
            winner = self.names[cast(int, round_vote.vote.winner)]  # a majority always has a winner
            return self._transcript(last_round, "consensus", winner, memories, None, counter, round_vote.vote)
        selection = self._select(memories, selector)
        decided_by: Decision = "selection" if selection.chosen else "default_solver"
        chosen = selection.chosen or default
        return self._transcript(last_round, decided_by, chosen, memories, selection, counter, None)

    def _solve_round(self, round_number: int, *, peers: tuple[Memory, ...]) -> tuple[Memory, ...]:
        memories = []
        for name in self.names:
            raw = self.solvers[name](SolveRequest(solver=name, round=round_number, peers=peers))
            normalized = normalize_agent_answer(
                raw, option_letters=self.config.option_letters, light_model=self.normalizer
            )
            self.turns.append(
                Turn(
                    round=round_number,
                    solver=name,
                    peers=tuple(peer.solver for peer in peers),
                    raw_output=raw,
                    answer=normalized.answer,
                    answer_source=normalized.source,
                )
            )
            memories.append(Memory(solver=name, answer=normalized.answer, reasoning=normalized.reasoning))
        return tuple(memories)

    def _vote(self, round_number: int, memories: tuple[Memory, ...]) -> RoundVote:
        answers = tuple(memory.answer for memory in memories)
        result = vote(answers, rel_tol=self.config.rel_tol, by_value=self.config.value_voting)
        round_vote = RoundVote(round=round_number, answers=answers, vote=result)
        self.votes.append(round_vote)
        return round_vote

    def _prune(self, round_number: int, memories: tuple[Memory, ...]) -> tuple[Memory, ...]:
        if not self.config.pruning:
            return memories
        pruner = cast(Pruner, self.pruner)  # run_debate refuses pruning without a pruner
        raws = [pruner(memory) for memory in memories]
        labels = [parse_label(raw) for raw in raws]
        result = apply_mask(memories, labels, strict=self.config.strict_pruning)
        for memory, raw, label in zip(memories, raws, labels, strict=True):
            kept = memory in result.kept
            self.prunes.append(PruneVerdict(round_number, memory.solver, raw, label, kept))
        return result.kept

    def _select(self, memories: tuple[Memory, ...], selector: Selector | None) -> Selection:
        if selector is None:
            return Selection(raw_output=None, chosen=None)
        raw = selector(memories)
        chosen = parse_selection(raw, self.names)
        if chosen is not None and not next(m for m in memories if m.solver == chosen).answer:
            chosen = None  # picking an empty answer is no pick at all
        return Selection(raw_output=raw, chosen=chosen)

    def _transcript(
        self,
        rounds: int,
        decided_by: Decision,
        solver: str,
        memories: tuple[Memory, ...],
        selection: Selection | None,
        counter: _Counter,
        result: Vote | None,
    ) -> Transcript:
        answer = next(memory.answer for memory in memories if memory.solver == solver)
        canonical = result.canonical if result is not None else canonicalize(answer)
        return Transcript(
            solvers=self.names,
            turns=tuple(self.turns),
            prunes=tuple(self.prunes),
            votes=tuple(self.votes),
            selection=selection,
            rounds=rounds,
            decided_by=decided_by,
            final_solver=solver,
            final_answer=answer,
            final_canonical=canonical,
            final_rendered=render(cast(Canonical, canonical)) if answer else "",  # vote winner or parsed: set
            calls=counter.frozen(),
        )


def _single_solver(
    name: str, solver: Solver, normalizer: LightModel | None, config: DebateConfig, counter: _Counter
) -> Transcript:
    """Level 5: one pass; the normalized answer is final as it stands (no canonicalization)."""
    raw = solver(SolveRequest(solver=name, round=1, peers=()))
    normalized = normalize_agent_answer(raw, option_letters=config.option_letters, light_model=normalizer)
    turn = Turn(1, name, (), raw, normalized.answer, normalized.source)
    return Transcript(
        solvers=(name,),
        turns=(turn,),
        prunes=(),
        votes=(),
        selection=None,
        rounds=1,
        decided_by="single_solver",
        final_solver=name,
        final_answer=normalized.answer,
        final_canonical=None,
        final_rendered=normalized.answer,
        calls=counter.frozen(),
    )
