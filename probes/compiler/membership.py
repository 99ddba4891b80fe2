"""Exact dedup and deterministic development selection (Kit §2.12). Pure."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from kit.canonical import digest

DEVELOPMENT = "development_reserved"
UNASSIGNED = "candidate_unassigned_not_release"
BLOCKED = "blocked"
DEVELOPMENT_METHOD = "deterministic_coverage_first_NOT_a_random_release_audit"


@dataclass(frozen=True)
class MemberInput:
    parent_pk: int
    problem_id: str
    source_identity: str
    content_group_hint: str
    tags: frozenset[tuple[str, str]] = field(default_factory=frozenset)  # (kind, value) coverage tags


@dataclass(frozen=True)
class MemberAssignment:
    parent_pk: int
    problem_id: str
    source_identity: str
    content_group_hint: str
    tags: frozenset[tuple[str, str]]
    dedup_group: str
    representative_id: str
    dedup_state: str
    split: str


def dedup_members(members: list[MemberInput]) -> list[MemberAssignment]:
    """Same source identity with different content → conflict (blocked); same content hint → one group."""
    hints_by_identity: dict[str, set[str]] = defaultdict(set)
    for m in members:
        hints_by_identity[m.source_identity].add(m.content_group_hint)
    groups: dict[str, list[MemberInput]] = defaultdict(list)
    result = []
    for m in members:
        if len(hints_by_identity[m.source_identity]) > 1:
            result.append(
                _assigned(
                    m, "ND-conflict-" + m.source_identity, m.problem_id, "identity_version_conflict", BLOCKED
                )
            )
        else:
            groups[m.content_group_hint].append(m)
    for group in groups.values():
        ids = sorted(m.problem_id for m in group)
        gid = "ND-" + digest(ids)
        for m in group:
            state = "representative" if m.problem_id == ids[0] else "exact_duplicate"
            result.append(
                _assigned(m, gid, ids[0], state, UNASSIGNED if state == "representative" else BLOCKED)
            )
    return sorted(result, key=lambda a: a.problem_id)


def _assigned(m: MemberInput, group: str, representative: str, state: str, split: str) -> MemberAssignment:
    return MemberAssignment(
        m.parent_pk,
        m.problem_id,
        m.source_identity,
        m.content_group_hint,
        m.tags,
        group,
        representative,
        state,
        split,
    )


def development_ids(members: list[MemberAssignment], *, seed: int, count: int) -> list[str]:
    """Greedy tag coverage; ties by the smallest ``digest([seed, "native_development_v1", pid])``."""
    pool = {m.problem_id: m.tags for m in members if m.dedup_state == "representative"}
    chosen: list[str] = []
    covered: set[tuple[str, str]] = set()
    while pool and len(chosen) < count:
        best = min(
            pool, key=lambda pid: (-len(pool[pid] - covered), digest([seed, "native_development_v1", pid]))
        )
        chosen.append(best)
        covered |= pool.pop(best)
    return sorted(chosen)


def assign_splits(
    members: list[MemberInput], *, seed: int = 2027, development_count: int = 25
) -> list[MemberAssignment]:
    assigned = dedup_members(members)
    development = set(development_ids(assigned, seed=seed, count=development_count))
    return [replace(m, split=DEVELOPMENT) if m.problem_id in development else m for m in assigned]
