"""Our probe-review decisions leave for the Kit: a ``physalign_decisions_v1`` file bound to the Kit's roots of an
imported Kit draft (Kit §6.2; the draft and its bindings: review/services/kit_review.py).

What the file holds, one entry per probe of the draft that is bound to ours, still unchanged here since the
draft was checked (our ``review_target_root`` equals the binding's, the probe not superseded) and a development
probe of the draft (the only probes the Kit's ``check_review`` and our import accept):

- the probe's **decision of record** on its current root in the development context, the rule of
  :func:`review.selectors.probe_outcome` (and of the release proof): the adjudicator's decision when there
  is one, else the primary's once the outcome is settled. Status and note as decided, the reviewer's
  username as text, the blind answer as the Kit's free text (:func:`review.release_proof.blind_text`), the
  six confirmations as booleans, on the Kit's ``review_target_root`` of the binding;
- ``pending`` with empty texts and every confirmation false when nothing settled it here yet (no decision,
  one of two, or a dispute waiting for its adjudicator), as the Kit's page exports a partly filled form;
- nothing for a probe settled only by a decision imported from a Kit file: that decision is the Kit team's
  own and is in their file already; writing it again would present it as ours (left out, and counted).

The document is checked by :func:`review.kit_decisions.normalize_decisions` against the same draft before it
is handed out (a file the Kit would refuse is never written) and serialized as canonical JSON plus a newline
(``kit.canonical.write_json_bytes``): the same state gives the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from audit.disclosure import disclose
from audit.services import event_record
from kit.canonical import bytes_digest, write_json_bytes
from physalign_site.errors import ApplicationError
from probes.models import Probe

from ..kit_decisions import (
    KitFileError,
    LegacyDecision,
    development_probe_ids,
    legacy_document,
    normalize_decisions,
    stored_draft,
)
from ..models import CONFIRMATION_KEYS, KitDecision, KitDraftImport, KitProbeBinding, ReviewDecision, Role
from ..permissions import can_manage_kit_decisions
from ..release_proof import blind_text
from ..selectors import DEVELOPMENT, fresh_decisions, outcome_of

ROOT_PREFIX = re.compile(r"[0-9a-f]{4,64}")


@dataclass(frozen=True)
class KitDecisionsExport:
    """One written decision file and what it left out, by logical probe id."""

    catalog_root: str
    data: bytes  # canonical JSON + "\n"
    sha256: str
    decided: list[str]  # approved or rejected here
    pending: list[str]  # bound and fresh, not settled here yet
    left_out: dict[str, list[str]] = field(default_factory=dict)  # why → probes: kit_decision, stale, …

    @property
    def filename(self) -> str:
        return f"physalign_decisions_{self.catalog_root[:12]}.json"


def _require_exporter(actor: Any) -> None:
    """The people who import Kit decisions export ours: key holders over the web, an operator's manage.py
    with ``actor=None`` (the file pairs each blind answer with the decision on the private target)."""
    if actor is not None and not can_manage_kit_decisions(actor):
        raise ApplicationError(
            "The decision file pairs reviewers' blind answers with their decisions on the private targets: "
            "only key holders (admin + probes.view_private_mapping) export it.",
            code="KEY_HOLDER_REQUIRED",
            status=403,
        )


def kit_draft_find(*, catalog_root: str) -> KitDraftImport:
    """The imported Kit draft with this catalog root, or the one whose root starts with it (4 to 64 hex
    digits); a clear refusal when none or several match."""
    wanted = catalog_root.strip().lower()
    if not ROOT_PREFIX.fullmatch(wanted):
        raise ApplicationError(
            "Name the Kit draft by its catalog root or a prefix of it (4 to 64 hex digits).",
            code="KIT_DRAFT_UNKNOWN",
            extra={"catalog_root": catalog_root[:80]},
            status=404,
        )
    matches = list(
        KitDraftImport.objects.filter(catalog_root__startswith=wanted).order_by("catalog_root")[:6]
    )
    if not matches:
        raise ApplicationError(
            "No imported Kit draft has this catalog root: import the draft first.",
            code="KIT_DRAFT_UNKNOWN",
            extra={"catalog_root": wanted},
            status=404,
        )
    if len(matches) > 1:
        raise ApplicationError(
            "Several imported Kit drafts start with this catalog root: give more of it.",
            code="KIT_DRAFT_AMBIGUOUS",
            extra={"catalog_root": wanted, "matches": [m.catalog_root for m in matches]},
        )
    return matches[0]


def decision_of_record(decisions: dict[str, ReviewDecision]) -> ReviewDecision | None:
    """The decision that settled a development probe (its fresh decisions by role), or None while it is
    pending or disputed: :func:`review.selectors.outcome_of` decides, and the row it settles by is the
    adjudicator's resolution when there is one, else the primary's."""
    if outcome_of(decisions, DEVELOPMENT).state not in ("approved", "rejected"):
        return None
    return decisions.get(Role.ADJUDICATOR) or decisions[Role.PRIMARY]


def decisions_of_record(roots: dict[int, str]) -> dict[int, ReviewDecision]:
    """:func:`decision_of_record` of each probe (pk → current root) that has one, reviewer and blind answer
    loaded (two queries in all)."""
    found = fresh_decisions(roots, {DEVELOPMENT})
    settled = {
        pk: row.pk
        for pk in roots
        if (row := decision_of_record(found.get((DEVELOPMENT, pk), {}))) is not None
    }
    rows = ReviewDecision.objects.select_related("reviewer", "blind").in_bulk(list(settled.values()))
    return {pk: rows[row_pk] for pk, row_pk in settled.items()}


def app_decision_records(roots: dict[int, str]) -> dict[int, dict[str, Any]]:
    """Each probe's (pk → current root) decision of record made here, as a decision file writes it
    (:meth:`LegacyDecision.record`, roots left empty) plus ``severity`` and ``sequence``; probes without one
    are absent. The import asks it to recognize our own decisions when a file brings them back."""
    return {
        pk: {**_entry(row, "", "").record(), "severity": row.severity, "sequence": row.sequence}
        for pk, row in decisions_of_record(roots).items()
    }


def _entry(row: ReviewDecision, qid: str, kit_root: str) -> LegacyDecision:
    return LegacyDecision(
        logical_probe_id=qid,
        review_target_root=kit_root,
        status=row.status,
        reviewer=row.reviewer.get_username(),
        blind_answer=blind_text(row.blind),
        confirmations={k: row.confirmations.get(k) is True for k in CONFIRMATION_KEYS},
        note=row.note,
    )


@transaction.atomic
def kit_decisions_export(*, draft: KitDraftImport, actor: Any) -> KitDecisionsExport:
    """The ``physalign_decisions_v1`` file of our decisions on the probes bound by ``draft`` (module
    docstring: which probes, which decision, what is left out). Records who was shown the blind answers
    (:func:`audit.disclosure.disclose`) and an audit event."""
    _require_exporter(actor)
    kit = stored_draft(
        catalog=draft.catalog,
        catalog_root=draft.catalog_root,
        development_problem_ids=draft.summary.get("development_problem_ids", []),
        project_id=draft.project_id,
    )
    development = development_probe_ids(kit)
    left_out: dict[str, list[str]] = {}
    fresh: dict[int, KitProbeBinding] = {}
    for binding in KitProbeBinding.objects.filter(draft=draft).select_related("probe"):
        probe, qid = binding.probe, binding.probe.logical_probe_id
        if qid not in development:
            left_out.setdefault("not_development", []).append(qid)
        elif probe.state == Probe.State.SUPERSEDED or probe.review_target_root != binding.review_target_root:
            left_out.setdefault("stale", []).append(qid)
        else:
            fresh[probe.pk] = binding
    roots = {pk: b.probe.review_target_root for pk, b in fresh.items()}
    reviewed = decisions_of_record(roots)
    kit_settled = set(
        KitDecision.objects.filter(probe_id__in=list(roots), role=Role.INDIVIDUAL).values_list(
            "probe_id", "review_target_root"
        )
    )
    entries, decided, pending, disclosed = [], [], [], []
    for pk, binding in fresh.items():
        probe, qid, kit_root = binding.probe, binding.probe.logical_probe_id, binding.kit_review_target_root
        if pk in reviewed:
            entries.append(_entry(reviewed[pk], qid, kit_root))
            decided.append(qid)
            disclosed.append((probe.parent_id, qid))
        elif (pk, probe.review_target_root) in kit_settled:
            left_out.setdefault("kit_decision", []).append(qid)
        else:
            entries.append(LegacyDecision(logical_probe_id=qid, review_target_root=kit_root))
            pending.append(qid)
    document = legacy_document(draft.catalog_root, entries)
    try:
        normalize_decisions(document, kit)
    except KitFileError as error:  # never hand out a file the Kit would refuse
        raise ApplicationError(
            f"The decision file would be refused by the Kit's rules: {error}",
            code=error.code,
            extra={"detail": error.detail},
            status=409,
        ) from error
    data = write_json_bytes(document)
    result = KitDecisionsExport(
        catalog_root=draft.catalog_root,
        data=data,
        sha256=bytes_digest(data),
        decided=sorted(decided),
        pending=sorted(pending),
        left_out={why: sorted(qids) for why, qids in sorted(left_out.items())},
    )
    disclose(actor, where="kit-decisions-export", probes=disclosed)
    event_record(
        actor=actor,
        verb="review.kit_decisions_export",
        obj=draft,
        after={
            "catalog_root": draft.catalog_root,
            "file_sha256": result.sha256,
            "decided": result.decided,
            "pending": result.pending,
            "left_out": result.left_out,
        },
    )
    return result
