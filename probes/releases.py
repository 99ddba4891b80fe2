"""Releases in the Kit layout (Kit §2.14, §7): export, validate, import, zip.

The layout, the freeze, the public records and the validation that rebuilds them are the pure
:mod:`probes.release_layout`; this module gathers the probes, their images and the review authorization from the
database, writes the directory and records the :class:`Release`. Layout written by :func:`release_export`::

    release.json  FILE_MANIFEST.json  README.md  datasheet.json  datasheet.csv  (probes.datasheet)
    public/qa_raw.json  public/qa_gold.json  public/images/<bytes_sha256><suffix>
    private/project/  (project.json, source/: catalog, membership, one draft per probe, image bytes, source strings)
    private/request/  (request.json, review_proof.PRIVATE.json, approval.TEMPLATE.json)
    private/signoff.json  private/contract_schemas/*.json
    private/frozen/<instance_id>.json  private/mappings.json  private/membership.json  private/pools.json

A release exported with a review :class:`~probes.release_layout.ReleaseAuthorization` (the review app's signoff)
validates; an unsigned export (``--without-signoff``, or a synthetic example of pending probes) is written in the
same layout but carries no signoff, and validation refuses it with ``EXPLICIT_SIGNOFF_REQUIRED``.
"""

from __future__ import annotations

import logging
import re
import shutil
import zipfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import bytes_digest, parse_json, write_json_bytes
from physalign_site.errors import ApplicationError

from . import release_layout as layout
from .attachments import AttachmentIndex
from .compiler.errors import CompileError
from .compiler.probe import prospective_plan
from .compiler.scorability import check_response_contract
from .datasheet.selectors import datasheet_for_export
from .datasheet.tables import folder_files
from .models import Membership, Probe, Release, ReleaseItem
from .release_layout import ReleaseAuthorization, ValidationReport
from .release_store import artifact_keep, build_dir, public_zip_name, release_folder, release_store_put

__all__ = [
    "ReleaseAuthorization",
    "ValidationReport",
    "file_manifest",
    "release_export",
    "release_import",
    "release_validate",
    "release_zip_build",
    "seal_directory",
]

RELEASE_SPLITS = {"development": Probe.Split.DEVELOPMENT, "test": Probe.Split.UNASSIGNED}
# What an unsigned export may fail on and still be written (it says so in its README and never validates).
UNSIGNED_TOLERATED = {"EXPLICIT_SIGNOFF_REQUIRED", "SYNTHETIC_DATA_CANNOT_BE_BENCHMARK_RELEASE"}
COMPILER_DIR = Path(__file__).resolve().parent / "compiler"
logger = logging.getLogger(__name__)


# Export ---------------------------------------------------------------------------------------------
def release_export(
    *,
    split: str,
    output: Path,
    actor: Any,
    synthetic_example: bool = False,
    problem_ids: Collection[str] | None = None,
    authorization: ReleaseAuthorization | None = None,
) -> Release:
    """Freeze whole, approved parents of a split into a new directory in the Kit layout.

    ``authorization`` is the review proof and signoff (from the review app's signoff); without it the export is
    an unsigned admin override. ``synthetic_example`` marks the artefact as not benchmark data (synthetic sources
    only); without an authorization it also admits pending probes under their prospective (approved) packets.
    ``problem_ids`` limits the export to those parents (the signoff's admitted set)."""
    output = Path(output)
    if split not in RELEASE_SPLITS:
        raise ApplicationError("The split must be development or test.", code="SPLIT_INVALID")
    if output.exists():
        raise ApplicationError(
            "The output directory exists; use a new directory.", code="OUTPUT_EXISTS_USE_NEW_DIRECTORY"
        )
    admit_pending = synthetic_example and authorization is None
    probes = list(_release_probes(split, admit_pending))
    if problem_ids is not None:
        probes = [p for p in probes if p.parent.problem_id in set(problem_ids)]
    left_out: dict[str, str] = {}
    if not admit_pending:
        probes, left_out = _whole_parents(probes, split)
        if problem_ids is not None and left_out:
            raise ApplicationError(
                "Parents the export was asked for are not fully reviewed.",
                code="RELEASE_PARENTS_NOT_COMPLETE",
                extra={"parents": left_out},
            )
    if not probes:
        raise ApplicationError(
            "No approved probes in this split.", code="RELEASE_EMPTY", extra={"left_out": left_out}
        )
    exported_by = getattr(actor, "username", "") or "cli"
    try:
        tree, manifest = _release_files(probes, split, synthetic_example, authorization, exported_by)
    except layout.ReleaseError as error:
        raise ApplicationError(
            f"The release cannot be built: {error}", code=error.code, extra={"detail": error.detail}
        ) from error
    # the datasheet beside release.json: sealed in FILE_MANIFEST.json, outside what the validation rebuilds
    tree |= folder_files(datasheet_for_export(tree=tree, manifest=manifest))
    staging = output.with_name(f".{output.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    for relative, data in tree.items():
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (staging / "public" / "images").mkdir(parents=True, exist_ok=True)
    seal_directory(staging)
    _self_validate(staging, signed=authorization is not None)
    if Release.objects.filter(release_id=manifest["release_id"]).exists():
        shutil.rmtree(staging, ignore_errors=True)
        raise ApplicationError("This exact release already exists.", code="RELEASE_EXISTS", status=409)
    staging.rename(output)
    # into the media bucket, when there is one (web and worker share no disk then)
    release_store_put(release_id=manifest["release_id"], root=output)
    raw = parse_json(tree["public/qa_raw.json"])
    gold = parse_json(tree["public/qa_gold.json"])
    with transaction.atomic():
        release = Release.objects.create(
            release_id=manifest["release_id"],
            split=split,
            origin=Release.Origin.EXPORTED,
            artifact_mode=manifest["artifact_mode"],
            path=str(output.resolve()),
            manifest=manifest,
            counts=manifest["counts"],
            created_by=actor if getattr(actor, "pk", None) else None,
        )
        _store_items(
            release,
            raw,
            gold,
            parse_json(tree["private/mappings.json"]),
            parse_json(tree["private/membership.json"]),
        )
        event_record(
            actor=actor,
            verb="release.export",
            obj=release,
            after={
                "release_id": release.release_id,
                "probes": len(probes),
                "left_out_parents": left_out,
                "approval_mode": manifest["approval_mode"],
            },
        )
    release.left_out = left_out  # type: ignore[attr-defined]  # for the caller: not a model field
    return release


def _release_files(
    probes: list[Probe],
    split: str,
    synthetic: bool,
    authorization: ReleaseAuthorization | None,
    exported_by: str,
) -> tuple[layout.Tree, dict[str, Any]]:
    index = AttachmentIndex(probes)  # two metadata queries for the whole export, not two per probe
    project_tree, project, catalog = layout.build_project(
        [_project_probe(p, index) for p in probes],
        _membership_data(probes),
        _source_private(probes),
        _compiler_hashes(),
    )
    loaded = layout.LoadedProject(
        project,
        catalog,
        parse_json(project_tree["source/membership.json"]),
        {i["logical_probe_id"]: parse_json(project_tree[f"source/{i['draft']}"]) for i in catalog["probes"]},
        {k.removeprefix("source/"): v for k, v in project_tree.items() if k.startswith("source/")},
        {},
    )
    mode = authorization.mode if authorization else ("synthetic_example" if synthetic else "admin_override")
    kept = sorted({p.parent.problem_id for p in probes})
    proof = layout.build_proof(
        mode, project, catalog, authorization=authorization, selected=kept, exported_by=exported_by
    )
    request = layout.selection_plan(loaded, proof, mode=mode, split=split)
    if request["selected_mothers"] != kept:
        raise layout.ReleaseError(
            "RELEASE_PROOF_DOES_NOT_COVER_PARENTS",
            f"proof admits {request['selected_mothers']}, export holds {kept}",
        )
    if authorization is not None:
        layout.synthetic_guard(loaded, request, synthetic)
    signoff = layout.signoff_record(request, authorization.signoff) if authorization else None
    tree, manifest, _ = layout.release_tree(loaded, project_tree, request, proof, signoff, synthetic)
    return tree, manifest


def _self_validate(staging: Path, *, signed: bool) -> None:
    """Validate before publishing (the Kit's order): no partial or invalid directory looks released."""
    report = layout.validate_release(staging)
    errors = [e for e in report.errors if signed or e["code"] not in UNSIGNED_TOLERATED]
    if errors:
        shutil.rmtree(staging, ignore_errors=True)
        raise ApplicationError(
            "The exported release does not validate.",
            code="RELEASE_SELF_VALIDATION_FAILED",
            extra={"errors": errors},
        )


def parent_is_synthetic(parent: Any) -> bool:
    return layout.is_synthetic_source(
        parent.problem_id, parent.source.name, bool(parent.meta.get("synthetic"))
    )


def _project_probe(probe: Probe, index: AttachmentIndex) -> layout.ProjectProbe:
    key = dict(probe.key.key)
    if (
        probe.state != Probe.State.APPROVED
    ):  # unsigned synthetic example only: the packet as it would be approved
        key["packet_plan"] = prospective_plan(key["packet_plan"])
    parent = probe.parent
    synthetic = parent_is_synthetic(parent)
    metadata = {
        **probe.metadata,
        "interface": probe.interface,
        "L_candidate": bool(key["joint_eligible"]),
        "packet_nonempty_candidate": key["packet_plan"]["state"] == "approved_nonempty",
        "source_is_synthetic": synthetic,
    }
    item = {
        "logical_probe_id": probe.logical_probe_id,
        "problem_id": parent.problem_id,
        "group_id": probe.parent_group_id,
        "content_group_hint": probe.content_group_hint,
        "task_id": probe.task_id,
        "language": probe.language,
        "review_target_root": probe.review_target_root,
        "metadata": metadata,
    }
    draft = {
        "key": key,
        "raw_view": probe.raw_view,
        "gold_view": probe.gold_view,
        "raw_messages": probe.raw_messages,
        "gold_messages": probe.gold_messages,
        "attachment_ids": probe.attachment_ids,
        "displays": probe.key.displays,
    }
    return layout.ProjectProbe(item=item, draft=draft, assets=_assets(probe, index))


def _assets(probe: Probe, index: AttachmentIndex) -> dict[str, tuple[str, bytes, int, int]]:
    assets = {}
    for attachment in index.of(probe):
        data = attachment.read()
        if attachment.is_view and bytes_digest(data) != attachment.sha256:
            raise ApplicationError(
                f"View {attachment.asset_id} of {probe.logical_probe_id} changed since it was rendered.",
                code="PUBLIC_IMAGE_SOURCE_CHANGED",
            )
        assets[attachment.asset_id] = (attachment.suffix, data, attachment.width, attachment.height)
    return assets


def _membership_data(probes: list[Probe]) -> dict[str, Any]:
    development = sorted(
        set(
            Probe.objects.exclude(state=Probe.State.SUPERSEDED)
            .filter(split=Probe.Split.DEVELOPMENT)
            .values_list("parent__problem_id", flat=True)
        )
    )
    rows = {m.parent_id: m for m in Membership.objects.filter(parent_id__in={p.parent_id for p in probes})}
    members = {}
    for probe in probes:
        row = rows.get(probe.parent_id)
        members[probe.parent.problem_id] = {
            "problem_id": probe.parent.problem_id,
            "split": probe.split,
            "dedup_state": row.dedup_state if row else "representative",
            "content_group_hint": row.content_group_hint if row else probe.content_group_hint,
        }
    return {"development_problem_ids": development, "members": [members[k] for k in sorted(members)]}


def _compiler_hashes() -> dict[str, str]:
    return {p.name: bytes_digest(p.read_bytes()) for p in sorted(COMPILER_DIR.glob("*.py"))}


def _whole_parents(probes: list[Probe], split: str) -> tuple[list[Probe], dict[str, str]]:
    """Only whole parents are released: a parent leaves the export (reported with the reason) when any of its
    live probes is pending review, disputed, in adjudication or rejected, or when a +GT packet of it would
    carry the read target of a probe of the parent that is not itself in the release."""
    admitted_ids = {p.pk for p in probes}
    siblings: dict[int, list[Probe]] = {}
    for probe in (
        Probe.objects.filter(parent_id__in={p.parent_id for p in probes})
        .exclude(state=Probe.State.SUPERSEDED)
        .select_related("parent", "key")
    ):
        siblings.setdefault(probe.parent_id, []).append(probe)
    kept: list[Probe] = []
    left_out: dict[str, str] = {}
    for probe in probes:
        family = siblings.get(probe.parent_id, [])
        problem_id = probe.parent.problem_id
        if problem_id in left_out:
            continue
        unfinished = sorted(p.logical_probe_id for p in family if p.state != Probe.State.APPROVED)
        if unfinished:
            left_out[problem_id] = f"{len(unfinished)} probe(s) not approved (pending, disputed or rejected)"
            continue
        outside = {
            r["expected"]
            for p in family
            if p.pk not in admitted_ids or p.split != probe.split
            for r in p.key.view.read_targets
        }
        packets = {
            e.get("text", "")
            for p in family
            if p.pk in admitted_ids
            for e in p.gold_view.get("recognition_packet", [])
        }
        if outside & packets:
            left_out[problem_id] = "a +GT packet carries the read target of a probe outside this release"
            continue
        kept.append(probe)
    return kept, left_out


def _release_probes(split: str, admit_pending: bool):
    probes = (
        Probe.objects.filter(split=RELEASE_SPLITS[split])
        .select_related("parent", "parent__source", "key")
        .prefetch_related("views", "parent__images")
        .order_by("logical_probe_id")
    )
    if not admit_pending:
        yield from probes.filter(state=Probe.State.APPROVED)
        return
    for probe in probes.exclude(state=Probe.State.SUPERSEDED).exclude(state=Probe.State.REJECTED):
        if not parent_is_synthetic(probe.parent):
            raise ApplicationError(
                "Only synthetic sources may be exported as a synthetic example.",
                code="SYNTHETIC_MODE_ONLY_FOR_SYNTHETIC_INPUT",
            )
        yield probe


def _source_private(probes: list[Probe]) -> dict[str, Any]:
    result = {}
    for probe in probes:
        parent = probe.parent
        if parent.problem_id in result:
            continue
        names = sorted({p.get("name", "") for p in _pass4(parent).get("physical_nodes", []) if p.get("name")})
        result[parent.problem_id] = {
            "answer": parent.answer,
            "solution": parent.solution,
            "entity_names": names,
        }
    return result


def _pass4(parent: ParentProblem) -> dict[str, Any]:
    doc = parent.passes.filter(pass_no=4).first()
    return doc.document if doc else {}


# Sealing and validation ------------------------------------------------------------------------------
def file_manifest(root: Path) -> dict[str, str]:
    return layout.directory_manifest(Path(root))


def seal_directory(root: Path) -> None:
    (Path(root) / "FILE_MANIFEST.json").write_bytes(write_json_bytes(file_manifest(root)))


def release_validate(path: Path) -> ValidationReport:
    """The Kit's validation (see :func:`probes.release_layout.validate_release`)."""
    return layout.validate_release(Path(path))


# Import --------------------------------------------------------------------------------------------
@transaction.atomic
def release_import(*, path: Path, actor: Any) -> Release:
    """Import an existing release directory (kit layout, public + private) so runs can use it."""
    root = Path(path)
    try:
        manifest = parse_json((root / "release.json").read_bytes())
        sealed = parse_json((root / "FILE_MANIFEST.json").read_bytes())
        raw = parse_json((root / "public" / "qa_raw.json").read_bytes())
        gold = parse_json((root / "public" / "qa_gold.json").read_bytes())
        mappings = parse_json((root / "private" / "mappings.json").read_bytes())
        members = parse_json((root / "private" / "membership.json").read_bytes())
    except (OSError, ValueError) as error:
        raise ApplicationError(
            f"Not a release directory: {error}", code="RELEASE_FILES_MISSING_OR_INVALID"
        ) from error
    if sealed != file_manifest(root):
        raise ApplicationError("FILE_MANIFEST.json does not match the files.", code="FILE_MANIFEST_MISMATCH")
    release_id = manifest.get("release_id", "")
    if not re.fullmatch(r"NREL-[0-9a-f]{64}", release_id):
        raise ApplicationError("release.json has no valid release_id.", code="RELEASE_ID_INVALID")
    if Release.objects.filter(release_id=release_id).exists():
        raise ApplicationError("This release is already imported.", code="RELEASE_EXISTS", status=409)
    _check_scorable(mappings)
    release = Release.objects.create(
        release_id=release_id,
        split=manifest.get("split", ""),
        origin=Release.Origin.IMPORTED,
        artifact_mode=manifest.get("artifact_mode", ""),
        path=str(root.resolve()),
        manifest=manifest,
        counts=manifest.get("counts", {}),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    _store_items(release, raw, gold, mappings, members)
    release_store_put(release_id=release_id, root=root)  # into the media bucket, when there is one
    return release


def _check_scorable(mappings: Any) -> None:
    """The compiler's response-contract check (gold readings normalize, contract consistent with reads and
    candidates) on every imported mapping: an unscorable item is refused here, not found out by the scorer."""
    if not isinstance(mappings, list):
        raise ApplicationError(
            "private/mappings.json must be a list.", code="RELEASE_FILES_MISSING_OR_INVALID"
        )
    for mapping in mappings:
        qid = mapping.get("logical_probe_id", "?") if isinstance(mapping, dict) else "?"
        try:
            check_response_contract(mapping)
        except CompileError as error:
            raise ApplicationError(
                f"{qid}: the private mapping cannot be scored ({error}).", code=error.code
            ) from error
        except (KeyError, TypeError, AttributeError) as error:
            raise ApplicationError(
                f"{qid}: the private mapping is malformed ({error!r}).", code="PRIVATE_MAPPING_INVALID"
            ) from error


def _store_items(
    release: Release, raw: list[Any], gold: list[Any], mappings: list[Any], members: list[Any]
) -> None:
    gold_by = {g["logical_probe_id"]: g for g in gold}
    key_by = {m["logical_probe_id"]: m for m in mappings}
    member_by = {m["logical_probe_id"]: m for m in members}
    ReleaseItem.objects.bulk_create(
        [
            ReleaseItem(
                release=release,
                logical_probe_id=r["logical_probe_id"],
                instance_id=r["instance_id"],
                problem_id=key_by.get(r["logical_probe_id"], {}).get("problem_id", ""),
                interface=r.get("interface", ""),
                public_raw=r,
                public_gold=gold_by.get(r["logical_probe_id"]),
                private_mapping=key_by.get(r["logical_probe_id"], {}),
                membership=member_by.get(r["logical_probe_id"], {}),
            )
            for r in raw
        ]
    )


# Zip download ----------------------------------------------------------------------------------------
def release_zip_build(*, release_pk: int) -> Release:
    """Zip the release's public part (progress in ``zip_progress``), kept beside the folder or in the bucket
    (:mod:`probes.release_store`)."""
    release = Release.objects.get(pk=release_pk)
    Release.objects.filter(pk=release.pk).update(zip_status="running", zip_progress=0)
    try:
        root = release_folder(release)
    except ApplicationError as error:  # its files are gone: the page says the build failed, the log says why
        logger.warning("release %s: no zip built: %s", release.release_id, error.message)
        Release.objects.filter(pk=release.pk).update(zip_status="failed", zip_progress=0)
        release.refresh_from_db()
        return release
    files = sorted(p for p in (root / "public").rglob("*") if p.is_file())
    target = build_dir(release) / f"{release.release_id}.public.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for n, path in enumerate(files, 1):
            archive.write(path, path.relative_to(root).as_posix())
            if n % 20 == 0 or n == len(files):
                Release.objects.filter(pk=release.pk).update(zip_progress=int(100 * n / len(files)))
    kept = artifact_keep(target, public_zip_name(release.release_id))
    Release.objects.filter(pk=release.pk).update(zip_status="ready", zip_progress=100, zip_path=kept)
    release.refresh_from_db()
    return release
