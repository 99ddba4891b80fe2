"""A Kit review project: its draft bound to our probes, and its decision files imported as review evidence."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.importers import extract_zip
from audit.disclosure import disclose
from audit.services import event_record
from kit.canonical import bytes_digest
from physalign_site import jsonsafety
from physalign_site.errors import ApplicationError
from probes.models import Probe
from probes.services import probe_record_review

from ..kit_decisions import (
    LEGACY,
    KitDraft,
    KitFileError,
    OurProbe,
    differences,
    is_decision_made_here,
    load_draft,
    normalize_decisions,
    same_bytes,
    verified_roots,
)
from ..models import (
    KitDecision,
    KitDraftImport,
    KitProbeBinding,
    Role,
)
from ..permissions import can_manage_kit_decisions
from ..selectors import (
    live_probes,
)
from .kit_decisions_export import app_decision_records


# Kit review decisions (design and rules in review/kit_decisions.py) ---------------------------------------------
def _require_importer(actor: Any) -> None:
    """Admins import Kit decisions over the web; an operator's manage.py passes ``actor=None``."""
    if actor is not None and not can_manage_kit_decisions(actor):
        raise ApplicationError(
            "Kit drafts carry every probe's private key: only key holders (admin + "
            "probes.view_private_mapping) import them and their decisions.",
            code="KEY_HOLDER_REQUIRED",
            status=403,
        )


def _our_side(probe: Probe) -> Any:
    key = probe.key
    # A settled probe's key holds the reviewed packet state; the Kit's draft core holds it pending.
    pending = {**key.view.packet_plan, "state": "pending_review", "empty_reason": None, "review_ref": None}
    images = {i.image_id: i for i in probe.parent.images.all()}
    views = {v.view_id: v for v in probe.views.all()}
    originals = [a for a in probe.attachment_ids if a in images]
    return OurProbe(
        key={**key.key, "packet_plan": pending},
        raw_view=probe.raw_view,
        gold_view=probe.gold_view,
        raw_messages=probe.raw_messages,
        gold_messages=probe.gold_messages,
        attachment_ids=probe.attachment_ids,
        displays=key.displays,
        pixels={
            **{a: images[a].pixels_sha256 for a in originals},
            **{v: r.pixels_sha256 for v, r in views.items()},
        },
        bytes={**{a: images[a].sha256 for a in originals}, **{v: r.bytes_sha256 for v, r in views.items()}},
    )


@transaction.atomic
def kit_draft_import(*, root: Path, actor: Any) -> Any:
    """Check a Kit draft and bind each of its probes that equals one of ours (same key, views, messages,
    render manifest and pixels) to the Kit's review target root. Probes that differ are reported, not bound.
    Importing the same draft again re-checks it against our current probes."""
    _require_importer(actor)
    try:
        draft = load_draft(root)
        roots = {qid: verified_roots(draft.items[qid], draft.previews[qid]) for qid in draft.items}
    except KitFileError as error:
        raise ApplicationError(
            f"The Kit draft was refused: {error}", code=error.code, extra={"detail": error.detail}
        ) from error
    record, _ = KitDraftImport.objects.update_or_create(
        catalog_root=draft.catalog_root,
        defaults={
            "project_id": draft.project_id,
            "catalog": draft.catalog,
            "imported_by": actor if getattr(actor, "pk", None) else None,
        },
    )
    ours = {
        p.logical_probe_id: p
        for p in live_probes()
        .filter(logical_probe_id__in=list(draft.items))
        .select_related("key", "parent")
        .prefetch_related("views", "parent__images")
    }
    bound, differing = [], {}
    KitProbeBinding.objects.filter(draft=record).delete()
    for qid in sorted(draft.items):
        probe = ours.get(qid)
        if probe is None:
            differing[qid] = ["not_compiled_here"]
            continue
        ourside, core = _our_side(probe), draft.previews[qid]["core"]
        diff = differences(core, ourside)
        if diff:
            differing[qid] = diff
            continue
        KitProbeBinding.objects.create(
            draft=record,
            probe=probe,
            kit_content_root=roots[qid][0],
            kit_review_target_root=roots[qid][1],
            review_target_root=probe.review_target_root,
            same_bytes=same_bytes(core, ourside),
        )
        bound.append(qid)
    # the draft's catalog.PRIVATE.json names the targets of every probe it shares with ours
    disclose(
        actor, where="kit-draft-import", probes=[(p.parent_id, p.logical_probe_id) for p in ours.values()]
    )
    record.summary = {
        "bound": bound,
        "differing": differing,
        "kit_probes": len(draft.items),
        "development_problem_ids": sorted(draft.development_problem_ids),
    }
    record.save(update_fields=["summary"])
    event_record(
        actor=actor,
        verb="review.kit_draft_import",
        obj=record,
        after={"catalog_root": draft.catalog_root, "bound": len(bound), "differing": sorted(differing)},
    )
    return record


@dataclass(frozen=True)
class KitImportReport:
    catalog_root: str
    imported: list[str]
    unchanged: list[str]
    pending: list[str]
    settled: dict[str, str]  # logical_probe_id -> the probe state the decision recorded


@transaction.atomic
def kit_decisions_import(
    *, document: Any, file_bytes_sha256: str, actor: Any, draft_root: Path | None = None
) -> KitImportReport:
    """Import one Kit decision file onto our probes, all or nothing.

    The file is checked as the Kit checks it (catalog root, fields, known development probes, duplicates,
    stale roots, strict booleans, approval and rejection rules); then every decided probe must be bound to
    that exact Kit root by an imported draft and be unchanged here since (else ``REVIEW_TARGET_STALE``).
    Each decision becomes an immutable :class:`KitDecision` (the Kit reviewer's name is text); an approval
    or rejection of a probe still pending review settles it, as our own development review does. A decision
    that is the one recorded here (our own exported file read back) is ``unchanged``: nothing is written.
    """
    _require_importer(actor)
    if draft_root is not None:
        kit_draft_import(root=draft_root, actor=actor)
    record, decisions = _decision_file_checked(document)
    bindings = {
        b.probe.logical_probe_id: b
        for b in KitProbeBinding.objects.filter(draft=record).select_related("probe")
    }
    schema, context = document["schema_version"], document.get("context_root", "")
    imported, unchanged, pending, settled = [], [], [], {}
    for qid, d in sorted(decisions.items()):
        if d["status"] == "pending":
            pending.append(qid)
            continue
        probe = _decided_probe(qid, d, bindings.get(qid), record)
        values = _decision_values(d)
        if _decision_made_here(d, probe, legacy=schema == LEGACY) or _decision_imported_before(
            qid, probe, context, values
        ):
            unchanged.append(qid)
            continue
        KitDecision.objects.create(
            draft=record,
            probe=probe,
            schema_version=schema,
            context_root=context,
            role=Role.INDIVIDUAL,
            file_sha256=file_bytes_sha256,
            review_target_root=probe.review_target_root,
            imported_by=actor if getattr(actor, "pk", None) else None,
            **values,
        )
        imported.append(qid)
        if probe.state == Probe.State.PENDING_REVIEW:
            _settle(probe, d["status"], actor)
            settled[qid] = d["status"]
    event_record(
        actor=actor,
        verb="review.kit_decisions_import",
        obj=record,
        after={
            "file_sha256": file_bytes_sha256,
            "schema_version": schema,
            "imported": imported,
            "unchanged": unchanged,
            "pending": pending,
            "settled": settled,
        },
    )
    return KitImportReport(
        catalog_root=record.catalog_root,
        imported=imported,
        unchanged=unchanged,
        pending=pending,
        settled=settled,
    )


def _decision_file_checked(document: Any) -> tuple[KitDraftImport, dict[str, Any]]:
    """The imported draft of the file's catalog root, and the file's decisions checked as the Kit checks them
    against that draft."""
    catalog_root = document.get("catalog_root") if isinstance(document, dict) else None
    record = KitDraftImport.objects.filter(catalog_root=catalog_root or "").first()
    if record is None:
        raise ApplicationError(
            "No imported Kit draft has this file's catalog root: import the draft first.",
            code="REVIEW_CATALOG_STALE",
            extra={"catalog_root": catalog_root},
        )
    catalog = record.catalog
    draft = KitDraft(
        root=Path("."),
        catalog=catalog,
        catalog_root=record.catalog_root,
        previews={},
        development_problem_ids=set(record.summary.get("development_problem_ids", [])),
        project_id=record.project_id,
        items={p["logical_probe_id"]: p for p in catalog["probes"]},
    )
    try:
        return record, normalize_decisions(document, draft)
    except KitFileError as error:
        raise ApplicationError(
            f"The Kit decision file was refused: {error}", code=error.code, extra={"detail": error.detail}
        ) from error


def _decided_probe(
    qid: str, d: dict[str, Any], binding: KitProbeBinding | None, record: KitDraftImport
) -> Probe:
    """Our probe a decision is about, locked: bound to the decision's Kit root by the draft, and unchanged
    here since the draft was checked."""
    if binding is None or binding.kit_review_target_root != d["review_target_root"]:
        raise ApplicationError(
            "This Kit probe is not the same as ours.",
            code="REVIEW_TARGET_STALE",
            extra={"logical_probe_id": qid, "differs": record.summary.get("differing", {}).get(qid, [])},
        )
    probe = Probe.objects.select_for_update().get(pk=binding.probe_id)
    if probe.state == Probe.State.SUPERSEDED or probe.review_target_root != binding.review_target_root:
        raise ApplicationError(
            "Our probe changed since the Kit draft was checked.",
            code="REVIEW_TARGET_STALE",
            extra={"logical_probe_id": qid},
        )
    return probe


def _decision_values(d: dict[str, Any]) -> dict[str, Any]:
    """The fields of a :class:`KitDecision` a Kit decision sets."""
    return {
        "status": d["status"],
        "severity": d["severity"],
        "confirmations": d["confirmations"],
        "blind_answer": d["blind_answer"],
        "kit_reviewer": d["reviewer"].strip(),
        "note": d["note"],
        "sequence": d["sequence"],
        "kit_review_target_root": d["review_target_root"],
    }


def _decision_made_here(d: dict[str, Any], probe: Probe, *, legacy: bool) -> bool:
    """Whether the file's decision is the one recorded here on the probe's current root (our own decision
    file, review/services/kit_decisions_export.py, read back): nothing new, not a Kit team's evidence."""
    ours = app_decision_records({probe.pk: probe.review_target_root}).get(probe.pk)
    return ours is not None and is_decision_made_here(d, ours, legacy=legacy)


def _decision_imported_before(qid: str, probe: Probe, context: str, values: dict[str, Any]) -> bool:
    """Whether this very decision was imported before (on the probe's current review target, in this
    context); another decision there is a conflict."""
    existing = KitDecision.objects.filter(
        probe=probe,
        review_target_root=probe.review_target_root,
        role=Role.INDIVIDUAL,
        context_root=context,
    ).first()
    if existing is None:
        return False
    if any(getattr(existing, k) != v for k, v in values.items()):
        raise ApplicationError(
            "Another decision on this probe was imported already.",
            code="CONFLICTING_REVIEWS_USE_ONE_ADJUDICATED_EXPORT",
            extra={"logical_probe_id": qid},
        )
    return True


def _settle(probe: Probe, status: str, actor: Any) -> None:
    """Settle a probe pending review by the Kit's approval or rejection, as our development review does."""
    if status == "approved":
        packet = "approved_nonempty" if probe.key.view.observation_ids else "approved_empty"
    else:
        packet = "rejected"
    probe_record_review(
        probe=probe,
        actor=actor,
        state=status,
        packet_state=packet,
        review_target_root=probe.review_target_root,
    )


def _draft_root_in(folder: Path) -> Path:
    """The folder of an extracted archive that holds the Kit draft (``catalog.PRIVATE.json``) or review
    project (``project.json`` + ``source/``): the archive root or its one top-level folder."""
    candidates = [
        folder,
        *sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("__", "."))),
    ]
    found = [
        c
        for c in candidates
        if (c / "catalog.PRIVATE.json").is_file()
        or ((c / "project.json").is_file() and (c / "source").is_dir())
    ]
    if len(found) != 1:
        raise ApplicationError(
            "The archive must hold one Kit draft (catalog.PRIVATE.json) or Kit review project "
            "(project.json and source/) at its root or in one top-level folder.",
            code="KIT_DRAFT_LAYOUT",
        )
    return found[0]


def kit_draft_upload(*, upload: Any, actor: Any) -> Any:
    """An uploaded zip of a Kit draft or review project: extracted with the import checks (paths, links,
    size, expansion ratio), checked and bound by :func:`kit_draft_import`, then deleted."""
    _require_importer(actor)
    if upload.size > settings.PHYSALIGN_IMPORT_MAX_BYTES:
        raise ApplicationError(
            f"The archive is larger than {settings.PHYSALIGN_IMPORT_MAX_BYTES:,} bytes.",
            code="import_too_large",
        )
    work = Path(tempfile.mkdtemp(prefix="kit-draft-"))
    try:
        archive = work / "upload.zip"
        with archive.open("wb") as sink:
            for chunk in upload.chunks():
                sink.write(chunk)
        try:
            extract_zip(archive, work / "x")
        except zipfile.BadZipFile as error:
            raise ApplicationError(
                "The upload is not a readable zip archive.", code="import_zip_invalid"
            ) from error
        return kit_draft_import(root=_draft_root_in(work / "x"), actor=actor)
    finally:
        shutil.rmtree(work, ignore_errors=True)


KIT_DECISION_FILE_MAX_BYTES = 20 * 1024 * 1024


def kit_decisions_upload(*, upload: Any, actor: Any) -> KitImportReport:
    """An uploaded Kit decision file (JSON: duplicate keys, NaN and bad UTF-8 refused), imported all or nothing."""
    _require_importer(actor)
    if upload.size > KIT_DECISION_FILE_MAX_BYTES:
        raise ApplicationError(
            f"The decision file is larger than {KIT_DECISION_FILE_MAX_BYTES:,} bytes.",
            code="import_too_large",
        )
    data = upload.read()
    try:
        document = jsonsafety.loads(data, max_string=settings.PHYSALIGN_TEXT_MAX_CHARS)
    except ValueError as error:
        raise ApplicationError(
            f"The decision file is not valid JSON: {error}", code="REVIEW_FILE_JSON_INVALID"
        ) from error
    return kit_decisions_import(document=document, file_bytes_sha256=bytes_digest(data), actor=actor)
