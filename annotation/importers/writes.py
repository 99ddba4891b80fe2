"""The write phase: sources, parents and their images, in the caller's one transaction."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction

from audit.services import event_record
from kit.canonical import bytes_digest, text_digest
from physalign_site.db import analyze_after_commit
from physalign_site.errors import ApplicationError

from ..binding import content_differences
from ..models import ImportJob, ParentProblem, PassDocument, ProblemImage, Source
from ..selectors import parent_passes_approved
from ..services import source_update
from .authority import ImportAuthority
from .kit_passes import passes_write
from .kit_rows import refresh_kit_parent_status
from .prepared import PreparedImage, PreparedParent, WriteState
from .progress import job_finish
from .report import PRIVATE_FIELDS, ImportReport


def _source_for(
    prepared: PreparedParent,
    *,
    actor: Any,
    authority: ImportAuthority,
    report: ImportReport,
    job_ref: dict[str, Any],
) -> Source:
    """The row's source: created when new (by any importer, audited); an existing one's licence changes only by an
    admin (``source_update``, audited), and for anyone else a differing licence is refused and reported."""
    name, license_ = prepared.source_name, prepared.source_license
    row, entry = prepared.report, report.source(name)
    source, created = Source.objects.get_or_create(name=name, defaults={"license": license_ or ""})
    if created:
        entry.created = True
        event_record(
            actor=actor,
            verb="source.created",
            obj=source,
            after={"name": name, "license": source.license, **job_ref},
        )
        row.note_changed("source")
        return source
    if license_ is None or source.license == license_:
        return source
    if authority.may_edit_sources:
        before = source.license
        source = source_update(source=source, actor=actor, changes={"license": license_}, job_ref=job_ref)
        entry.changed["license"] = {"before": before, "after": license_}
        row.note_changed("source.license")
        return source
    entry.refused["license"] = {"stored": source.license, "file": license_}
    row.refuse(
        "SOURCE_CHANGE_REFUSED",
        f"Source {name!r}: the file's licence {license_!r} differs from the stored one ({source.license!r}). "
        "A source's name, licence, citation and URL change only by an admin; the stored licence is kept.",
        fields=["source.license"],
    )
    return source


def _audit_value(name: str, value: Any) -> Any:
    """Private fields go to the audit trail as digests only."""
    if name in PRIVATE_FIELDS:
        return {"sha256": text_digest(value or "")}
    return value


def _save_image_file(image: ProblemImage, prepared: PreparedImage, state: WriteState) -> None:
    data = prepared.path.read_bytes()
    info = prepared.info
    if len(data) != info.byte_size or bytes_digest(data) != info.sha256:
        raise ApplicationError(
            f"{prepared.original_name} changed while it was being imported; try again.",
            code="image_changed_during_import",
        )
    image.file.save(f"{prepared.image_id}.{info.suffix}", ContentFile(data), save=False)
    saved = image.file.name
    assert saved is not None  # FieldFile.save sets the name the storage saved it under
    state.saved_files.append(saved)


def _apply_image_info(image: ProblemImage, prepared: PreparedImage, ordinal: int) -> None:
    info = prepared.info
    image.image_id = prepared.image_id
    image.ordinal = ordinal
    image.original_name = prepared.original_name[:300]
    image.media_type = info.media_type
    image.width = info.width
    image.height = info.height
    image.byte_size = info.byte_size
    image.sha256 = info.sha256
    image.pixels_sha256 = info.pixels_sha256


def _sync_images(parent: ParentProblem, images: list[PreparedImage], state: WriteState) -> bool:
    """Make the parent's images equal to ``images`` (same ids, order and bytes). True if anything changed.

    Unchanged images keep their rows (other tables may point at them); a changed image is updated
    in place; old files are deleted only once the transaction has committed.
    """
    existing = {image.image_id: image for image in parent.images.all()}
    wanted = {prepared.image_id for prepared in images}
    unchanged = (
        all(
            prepared.image_id in existing
            and existing[prepared.image_id].sha256 == prepared.info.sha256
            and existing[prepared.image_id].ordinal == ordinal
            for ordinal, prepared in enumerate(images)
        )
        and set(existing) == wanted
    )
    if unchanged:
        return False
    storage = ProblemImage._meta.get_field("file").storage
    stale_files: list[str | None] = []  # FieldFile names (falsy ones are skipped below)
    for image_id, stale in existing.items():
        if image_id not in wanted:
            stale_files.append(stale.file.name)
            stale.delete()
    kept = [existing[p.image_id] for p in images if p.image_id in existing]
    # Move kept rows out of the way first, so the (parent, ordinal) constraint never trips mid-update.
    offset = len(existing) + len(images) + 1
    for row in kept:
        row.ordinal += offset
        row.save(update_fields=["ordinal"])
    for ordinal, prepared in enumerate(images):
        image = existing.get(prepared.image_id)
        if image is None:
            image = ProblemImage(parent=parent)
            _apply_image_info(image, prepared, ordinal)
            _save_image_file(image, prepared, state)
            image.save()
            continue
        same_bytes = image.sha256 == prepared.info.sha256
        old_name = image.file.name
        _apply_image_info(image, prepared, ordinal)
        if not same_bytes:
            _save_image_file(image, prepared, state)
            stale_files.append(old_name)
        image.save()
    for name in stale_files:
        if name:
            transaction.on_commit(partial(storage.delete, name))
    return True


def _parent_snapshot(parent: ParentProblem, names: Iterable[str]) -> dict[str, Any]:
    return {name: _audit_value(name, getattr(parent, name)) for name in names}


def _approved_passes(parent: ParentProblem) -> list[int]:
    return sorted(parent.passes.filter(status=PassDocument.Status.APPROVED).values_list("pass_no", flat=True))


def _refuse_approved_content(
    prepared: PreparedParent, parent: ParentProblem, content_changed: list[str], approved: list[int]
) -> None:
    passes = ", ".join(str(n) for n in approved)
    prepared.report.refuse(
        "APPROVED_CONTENT_CHANGE_REFUSED",
        f"Problem {parent.problem_id}: the file changes its {', '.join(content_changed)}, but Pass(es) {passes} "
        "are approved on the stored content. Only a source reviewer or an admin may change an approved "
        "problem's statement, question, options or images (the approvals then go stale); nothing of this "
        "problem was changed.",
        fields=content_changed,
    )


def _existing_parent_source(
    prepared: PreparedParent,
    parent: ParentProblem,
    *,
    actor: Any,
    authority: ImportAuthority,
    report: ImportReport,
    job_ref: dict[str, Any],
) -> Source:
    """The source an existing parent will belong to. Moving it to another source is an admin's change; for
    anyone else it is refused and the parent keeps its source (nothing is created for the refused name).
    Only an admin writes here, so a row refused afterwards has changed nothing."""
    if prepared.source_name == parent.source.name or authority.may_edit_sources:
        return _source_for(prepared, actor=actor, authority=authority, report=report, job_ref=job_ref)
    prepared.report.refuse(
        "SOURCE_CHANGE_REFUSED",
        f"Problem {parent.problem_id} belongs to source {parent.source.name!r}; the file names "
        f"{prepared.source_name!r}. Which source a problem belongs to changes only by an admin; it is kept.",
        fields=["source"],
    )
    return parent.source


def _create_parent(
    prepared: PreparedParent,
    fields: dict[str, Any],
    kit_source: Any,
    *,
    actor: Any,
    authority: ImportAuthority,
    state: WriteState,
    report: ImportReport,
    job_ref: dict[str, Any],
) -> str:
    source = _source_for(prepared, actor=actor, authority=authority, report=report, job_ref=job_ref)
    parent = ParentProblem(
        problem_id=prepared.problem_id,
        source=source,
        **fields,
        **({"kit_source": kit_source} if kit_source is not None else {}),
    )
    parent.save()
    _sync_images(parent, prepared.images, state)
    after = _parent_snapshot(parent, [*fields, "status", "version"])
    after.update(source=source.name, images=[[p.image_id, p.info.sha256] for p in prepared.images], **job_ref)
    event_record(actor=actor, verb="parent.imported", obj=parent, after=after)
    prepared.report.note_changed("problem")
    return "created"


def _write_parent(
    prepared: PreparedParent,
    *,
    actor: Any,
    authority: ImportAuthority,
    state: WriteState,
    report: ImportReport,
    job: ImportJob | None,
) -> str:
    """Create or update one parent and its images. Returns created | updated | unchanged | refused.

    An existing parent's answer, solution and answer type (derived from the answer) are kept unless the
    uploader may edit private fields; the outcome then depends on public fields only, so a row cannot be
    used to test whether a guessed answer is right.

    An existing parent with an approved pass keeps its statement, question, options and images unless the
    uploader may review: for anyone else the row is refused whole (``refused``: nothing of the parent, its
    images or its passes is written). When a reviewer or admin changes them, every approval made on the earlier
    content is stale (``annotation.binding``) and the report says so. Which source an existing parent belongs to
    changes only by an admin."""
    fields = dict(prepared.fields)
    # The Kit's file hashes describe the files, not the problem: kept current, never a content change.
    kit_source = fields.pop("kit_source", None)
    row = prepared.report
    job_ref = {"import_job": job.pk} if job is not None else {}
    parent = (
        ParentProblem.objects.select_for_update()
        .select_related("source")
        .filter(problem_id=prepared.problem_id)
        .first()
    )
    if parent is None:
        return _create_parent(
            prepared,
            fields,
            kit_source,
            actor=actor,
            authority=authority,
            state=state,
            report=report,
            job_ref=job_ref,
        )

    _drop_kept_fields(prepared, fields, authority)
    source = _existing_parent_source(
        prepared, parent, actor=actor, authority=authority, report=report, job_ref=job_ref
    )
    content_changed = content_differences(
        parent, fields, images=[(p.image_id, p.info.sha256) for p in prepared.images]
    )
    approved = _approved_passes(parent) if content_changed else []
    if approved and not authority.may_change_approved_content:
        _refuse_approved_content(prepared, parent, content_changed, approved)
        return "refused"
    if kit_source is not None and parent.kit_source != kit_source:
        ParentProblem.objects.filter(pk=parent.pk).update(kit_source=kit_source)
        parent.kit_source = kit_source
    if not _update_parent(prepared, parent, fields, source, actor=actor, state=state, job_ref=job_ref):
        return "unchanged"
    if approved:
        _report_stale_approvals(prepared, parent, content_changed, approved, actor=actor)
    elif parent.passes.exists() and content_changed:
        row.warn(
            "PARENT_CHANGED_UNDER_PASSES",
            "The problem text or images changed and the problem already has pass documents; "
            "check them against the new version.",
        )
    return "updated"


def _drop_kept_fields(prepared: PreparedParent, fields: dict[str, Any], authority: ImportAuthority) -> None:
    """Remove from ``fields`` what an update keeps: the answer, solution and answer type unless the row brings
    them and the uploader may edit private fields (a warning when the row brings them and may not), and the
    domain when the row keeps private fields and has no domain of its own."""
    if prepared.keep_private_on_update or not authority.may_edit_private:
        for name in (*PRIVATE_FIELDS, "answer_type"):
            fields.pop(name, None)
        if prepared.carries_private and not authority.may_edit_private:
            prepared.report.warn(
                "PRIVATE_FIELDS_KEPT",
                "The answer and solution of an existing problem change only by an admin; the stored ones are kept.",
            )
    if prepared.keep_private_on_update and not fields.get("domain"):
        fields.pop("domain", None)


def _update_parent(
    prepared: PreparedParent,
    parent: ParentProblem,
    fields: dict[str, Any],
    source: Source,
    *,
    actor: Any,
    state: WriteState,
    job_ref: dict[str, Any],
) -> bool:
    """Give an existing parent the row's fields, source and images: a new version, audited. False (nothing
    saved) when all of them are as stored."""
    changed = [name for name, value in fields.items() if getattr(parent, name) != value]
    source_changed = parent.source_id != source.pk
    before = _parent_snapshot(parent, changed)
    if source_changed:
        before["source"] = parent.source.name
    old_images = [[image.image_id, image.sha256] for image in parent.images.all()]
    for name in changed:
        setattr(parent, name, fields[name])
    parent.source = source
    images_changed = _sync_images(parent, prepared.images, state)
    if not changed and not source_changed and not images_changed:
        return False
    parent.version += 1
    parent.save()
    prepared.report.note_changed(
        *changed, *(["source"] if source_changed else []), *(["images"] if images_changed else [])
    )
    after = _parent_snapshot(parent, changed)
    if source_changed:
        after["source"] = source.name
    if images_changed:
        before["images"] = old_images
        after["images"] = [[p.image_id, p.info.sha256] for p in prepared.images]
    after.update(version=parent.version, **job_ref)
    _record_reimport(parent, changed, before, after, actor=actor, job_ref=job_ref)
    return True


def _record_reimport(
    parent: ParentProblem,
    changed: list[str],
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    actor: Any,
    job_ref: dict[str, Any],
) -> None:
    """The audit events of a re-import: ``parent.reimported``, and ``parent.private_fields_changed`` naming
    the answer or solution when they changed (only an admin, or the server's operator, changes them)."""
    event_record(actor=actor, verb="parent.reimported", obj=parent, before=before, after=after)
    private_changed = sorted(set(PRIVATE_FIELDS) & set(changed))
    if private_changed:
        event_record(
            actor=actor,
            verb="parent.private_fields_changed",
            obj=parent,
            before={n: before[n] for n in private_changed},
            after={**{n: after[n] for n in private_changed}, **job_ref},
        )


def _report_stale_approvals(
    prepared: PreparedParent,
    parent: ParentProblem,
    content_changed: list[str],
    approved: list[int],
    *,
    actor: Any,
) -> None:
    """A reviewer's or admin's change of approved content: the approvals stay on record, stale; an annotated
    parent is back in annotation until they are renewed."""
    prepared.report.warn(
        "APPROVALS_STALE",
        f"The problem's {', '.join(content_changed)} changed; the approvals of Pass(es) "
        f"{', '.join(str(n) for n in approved)} were given for the earlier content and are now stale: they need a "
        "new review before the problem compiles.",
        fields=content_changed,
    )
    if parent.status == ParentProblem.Status.ANNOTATED and not parent_passes_approved(parent=parent):
        parent.status = ParentProblem.Status.IN_ANNOTATION
        parent.save(update_fields=["status", "updated_at"])
        event_record(
            actor=actor,
            verb="parent.status_changed",
            obj=parent,
            before={"status": ParentProblem.Status.ANNOTATED},
            after={"status": parent.status, "by": "import", "reason": "approvals stale"},
        )
        prepared.report.note_changed("status")


def _run_writes(
    report: ImportReport,
    prepared_rows: list[PreparedParent],
    *,
    actor: Any,
    job: ImportJob | None,
    write_passes: bool,
) -> None:
    state = WriteState()
    authority = ImportAuthority.of(actor)
    storage = ProblemImage._meta.get_field("file").storage
    try:
        with transaction.atomic():
            for prepared in prepared_rows:
                written = _write_parent(
                    prepared, actor=actor, authority=authority, state=state, report=report, job=job
                )
                if write_passes and written != "refused":
                    parent = ParentProblem.objects.select_for_update().get(problem_id=prepared.problem_id)
                    passes_write(parent, prepared, actor=actor, authority=authority)
                    if refresh_kit_parent_status(parent, prepared, actor=actor, authority=authority):
                        prepared.report.note_changed("status")
                prepared.report.settle(written)
    except BaseException:
        for name in state.saved_files:  # the rows are gone; do not leave their files behind
            storage.delete(name)
        for prepared in prepared_rows:
            prepared.report.outcome = "not_imported"
            prepared.report.changed.clear()
        report.sources.clear()
        raise


def write_or_refuse(
    report: ImportReport,
    prepared_rows: list[PreparedParent],
    *,
    actor: Any,
    job: ImportJob | None,
    write_passes: bool,
) -> ImportReport:
    if report.has_errors:
        report.mark_failed()
    else:
        try:
            _run_writes(report, prepared_rows, actor=actor, job=job, write_passes=write_passes)
            analyze_after_commit(ParentProblem, ProblemImage, PassDocument, rows=len(prepared_rows))
        except ApplicationError as exc:  # e.g. a file changed between the check and the write
            report.error(exc.code.upper(), exc.message)
            report.mark_failed()
    job_finish(job, report)
    return report
