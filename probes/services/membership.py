"""Membership, exact dedup and development selection (Kit §2.12) over every parent with live probes."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from kit.canonical import digest
from probes.compiler.membership import MemberInput, assign_splits

from ..models import Membership, Probe


@transaction.atomic
def membership_refresh(*, seed: int = 2027, development_count: int = 25) -> dict[str, int]:
    """Recompute dedup groups and splits over every parent that has live probes; update probe splits.

    Reads only the few columns and metadata keys the coverage tags use (not the probes' big JSON), and writes
    in bulk: memberships that changed, then one update per split for the probes whose split changed."""
    live = (
        Probe.objects.exclude(state=Probe.State.SUPERSEDED)
        .order_by("parent__problem_id", "logical_probe_id")
        .values_list(
            "parent_id",
            "parent__problem_id",
            "parent__source__name",
            "parent__source_split",
            "parent__source_sample_id",
            "content_group_hint",
            "interface",
            "language",
            "metadata__representation_kind",
            "metadata__public_text_availability",
            "metadata__image_count",
            "metadata__repair_applied_to_query",
        )
    )
    by_parent: dict[int, list[tuple[Any, ...]]] = {}
    for row in live:
        by_parent.setdefault(row[0], []).append(row)
    members = [_member_input(rows) for rows in by_parent.values()]
    assigned = assign_splits(members, seed=seed, development_count=development_count)
    existing = {m.parent_id: m for m in Membership.objects.filter(parent_id__in=list(by_parent))}
    created: list[Membership] = []
    changed: list[Membership] = []
    by_split: dict[str, list[int]] = {}
    counts: dict[str, int] = {}
    for member in assigned:
        values = {
            "source_identity": member.source_identity,
            "content_group_hint": member.content_group_hint,
            "dedup_group": member.dedup_group,
            "representative_id": member.representative_id,
            "dedup_state": member.dedup_state,
            "split": member.split,
            "tags": [list(tag) for tag in sorted(member.tags)],
        }
        membership = existing.get(member.parent_pk)
        if membership is None:
            created.append(Membership(parent_id=member.parent_pk, **values))
        elif any(getattr(membership, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(membership, name, value)
            changed.append(membership)
        by_split.setdefault(member.split, []).append(member.parent_pk)
        counts["split_" + member.split] = counts.get("split_" + member.split, 0) + 1
    Membership.objects.bulk_create(created, batch_size=1000)
    Membership.objects.bulk_update(changed, fields=_MEMBERSHIP_FIELDS, batch_size=500)
    for split, parent_pks in by_split.items():
        (
            Probe.objects.filter(parent_id__in=parent_pks)
            .exclude(state=Probe.State.SUPERSEDED)
            .exclude(split=split)
            .update(split=split)
        )
    return counts


_MEMBERSHIP_FIELDS = [
    "source_identity",
    "content_group_hint",
    "dedup_group",
    "representative_id",
    "dedup_state",
    "split",
    "tags",
]


def _member_input(rows: list[tuple[Any, ...]]) -> MemberInput:
    """One parent's coverage tags from its live probes' rows (see ``membership_refresh``); a metadata key the
    compiler did not write counts as its default, as ``dict.get`` would."""
    parent_pk, problem_id, namespace, split, sample, content_group_hint = rows[0][:6]
    tags = set()
    for *_, interface, language, representation, public_text, image_count, repair in rows:
        tags.update(
            {
                ("interface", interface),
                ("language", language),
                ("namespace", namespace),
                ("representation", representation if representation is not None else ""),
                ("public_text", public_text if public_text is not None else ""),
                ("images", "multi" if (image_count if image_count is not None else 1) > 1 else "single"),
                ("repair", str(bool(repair))),
            }
        )
    return MemberInput(
        parent_pk=parent_pk,
        problem_id=problem_id,
        source_identity=digest([namespace, split, sample]),
        content_group_hint=content_group_hint,
        tags=frozenset(tags),
    )
