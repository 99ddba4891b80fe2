"""Request variants per condition (paper App. D.2). Pure.

raw = Base messages; gold = +GT messages; no_image = raw text with no attachment at all (coordinates
and candidate geometry stay in the text); reordered = raw with the candidate list permuted by a fixed
seed, every alias staying bound to its regions.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import cast

_HEADERS = ("[Candidates]", "【候选】")
_ALIAS = re.compile(r"^(E\d+):")


def reorder_candidates(user: str, *, seed: int, probe_id: str) -> str:
    """Permute the candidate blocks (all lines of one alias move together) with a per-probe seed."""
    lines = user.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() in _HEADERS), None)
    if start is None:
        return user
    end = start + 1
    while end < len(lines) and _ALIAS.match(lines[end]):
        end += 1
    groups: dict[str, list[str]] = {}
    for line in lines[start + 1 : end]:
        alias = cast(re.Match[str], _ALIAS.match(line))  # every line before ``end`` matched above
        groups.setdefault(alias.group(1), []).append(line)
    order = list(groups)
    if len(order) < 2:
        return user
    digest = hashlib.sha256(f"{seed}|reordered|{probe_id}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    permuted = order[:]
    for _ in range(10):  # a permutation that differs from the shown order when one exists
        rng.shuffle(permuted)
        if permuted != order:
            break
    block = [line for alias in permuted for line in groups[alias]]
    return "\n".join(lines[: start + 1] + block + lines[end:])
