"""How a compile run's parents are split into chunks, one task each (Pure).

Parents that share a source identity produce the same logical probe ids, and which of them holds a probe
depends on the order they are compiled in (the first in problem_id order; the others are blocked with
DUPLICATE_LOGICAL_ID). So they always go to one chunk, in problem_id order, and no two chunks ever write the
same probe: the result does not depend on which worker runs which chunk when.
"""

from __future__ import annotations

from collections.abc import Sequence


def plan_chunks(parents: Sequence[tuple[int, str]], size: int) -> list[list[int]]:
    """Chunks of parent pks from ``(pk, source identity)`` pairs given in problem_id order.

    A chunk takes whole identity groups until it holds ``size`` parents; the last chunks shrink (to a quarter
    of what remains, down to ``size // 4``) so the workers run out of work at nearly the same time instead of
    one worker compiling a whole last chunk alone. Within a chunk, parents keep their problem_id order."""
    size = max(size, 1)
    floor = max(size // 4, 1)
    position = {pk: n for n, (pk, _) in enumerate(parents)}
    groups: dict[str, list[int]] = {}
    for pk, identity in parents:
        groups.setdefault(identity, []).append(pk)
    chunks: list[list[int]] = []
    current: list[int] = []
    remaining = len(parents)
    target = min(size, max(-(-remaining // 4), floor))
    for members in groups.values():  # in the order of each group's first parent
        current.extend(members)
        if len(current) >= target:
            chunks.append(sorted(current, key=position.__getitem__))
            remaining -= len(current)
            current = []
            target = min(size, max(-(-remaining // 4), floor))
    if current:
        chunks.append(sorted(current, key=position.__getitem__))
    return chunks
