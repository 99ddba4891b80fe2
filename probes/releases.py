"""Releases in the kit layout (Kit §2.14): export, validate (rebuild + leakage scan), import, zip.

Layout written by :func:`release_export`::

    release.json  FILE_MANIFEST.json  README.md
    public/qa_raw.json  public/qa_gold.json  public/images/<bytes_sha256><suffix>
    private/mappings.json  private/membership.json  private/pools.json  private/frozen/<instance_id>.json
    private/source_private.json   (answers, solutions and entity names: the leakage scan's private strings)
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.events import event_record
from annotation.models import ParentProblem
from physalign_site.canonical import bytes_digest, digest, parse_json, write_json_bytes
from physalign_site.errors import ApplicationError

from .compiler.probe import prospective_plan
from .models import Probe, Release, ReleaseItem

PUBLIC_SCHEMA = "physalign_public_qa_v1"
PUBLIC_KEYS = {"schema_version", "instance_id", "logical_probe_id", "task_id", "interface", "language", "split",
               "condition", "input"}
ATTACHMENT_KEYS = {"asset_id", "path", "sha256", "width", "height"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif"}
RELEASE_SPLITS = {"development": Probe.Split.DEVELOPMENT, "test": Probe.Split.UNASSIGNED}
SYNTHETIC = "synthetic_example_NOT_benchmark_data"
REVIEWED = "reviewed_data_release"


# Export ---------------------------------------------------------------------------------------------
def release_export(*, split: str, output: Path, actor: Any, synthetic_example: bool = False,
                   problem_ids: Collection[str] | None = None) -> Release:
    """Freeze approved probes of a split into a new directory. ``synthetic_example`` admits pending
    probes under their prospective (approved) packets and marks the artefact as not benchmark data.
    ``problem_ids`` limits the export to those parents (the review app's signoff passes its admitted set)."""
    output = Path(output)
    if split not in RELEASE_SPLITS:
        raise ApplicationError("The split must be development or test.", code="SPLIT_INVALID")
    if output.exists():
        raise ApplicationError("The output directory exists; use a new directory.", code="OUTPUT_EXISTS_USE_NEW_DIRECTORY")
    probes = list(_release_probes(split, synthetic_example))
    if problem_ids is not None:
        probes = [p for p in probes if p.parent.problem_id in set(problem_ids)]
    left_out: dict[str, str] = {}
    if not synthetic_example:
        probes, left_out = _whole_parents(probes, split)
        if problem_ids is not None and left_out:
            raise ApplicationError("Parents the export was asked for are not fully reviewed.",
                                   code="RELEASE_PARENTS_NOT_COMPLETE", extra={"parents": left_out})
    if not probes:
        raise ApplicationError("No approved probes in this split.", code="RELEASE_EMPTY", extra={"left_out": left_out})
    frozen = [_freeze(p, split, actor, synthetic_example) for p in probes]
    images = _collect_images(probes)
    staging = output.with_name(f".{output.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "public" / "images").mkdir(parents=True)
    (staging / "private" / "frozen").mkdir(parents=True)
    for sha, (suffix, data) in images.items():
        (staging / "public" / "images" / f"{sha}{suffix}").write_bytes(data)
    raw, gold = build_public(frozen)
    _write(staging / "public" / "qa_raw.json", raw)
    _write(staging / "public" / "qa_gold.json", gold)
    for item in frozen:
        _write(staging / "private" / "frozen" / f"{item['envelope']['instance_id']}.json", item)
    members = [_membership(item, p) for item, p in zip(frozen, probes, strict=True)]
    _write(staging / "private" / "mappings.json", [item["private"] for item in frozen])
    _write(staging / "private" / "membership.json", members)
    _write(staging / "private" / "pools.json", _pools(members))
    _write(staging / "private" / "source_private.json", _source_private(probes))
    manifest = _release_manifest(split, synthetic_example, members, raw, gold)
    _write(staging / "release.json", manifest)
    (staging / "README.md").write_text(_readme(manifest), encoding="utf-8")
    seal_directory(staging)
    if Release.objects.filter(release_id=manifest["release_id"]).exists():
        shutil.rmtree(staging, ignore_errors=True)
        raise ApplicationError("This exact release already exists.", code="RELEASE_EXISTS", status=409)
    staging.rename(output)
    with transaction.atomic():
        release = Release.objects.create(
            release_id=manifest["release_id"], split=split, origin=Release.Origin.EXPORTED,
            artifact_mode=manifest["artifact_mode"], path=str(output.resolve()), manifest=manifest,
            counts=manifest["counts"], created_by=actor if getattr(actor, "pk", None) else None)
        _store_items(release, raw, gold, [item["private"] for item in frozen], members)
        event_record(actor=actor, verb="release.export", obj=release,
                     after={"release_id": release.release_id, "probes": len(probes), "left_out_parents": left_out})
    release.left_out = left_out
    return release


def _whole_parents(probes: list[Probe], split: str) -> tuple[list[Probe], dict[str, str]]:
    """Only whole parents are released: a parent leaves the export (reported with the reason) when any of its
    live probes is pending review, disputed, in adjudication or rejected, or when a +GT packet of it would
    carry the read target of a probe of the parent that is not itself in the release."""
    admitted_ids = {p.pk for p in probes}
    siblings: dict[int, list[Probe]] = {}
    for probe in (Probe.objects.filter(parent_id__in={p.parent_id for p in probes})
                  .exclude(state=Probe.State.SUPERSEDED).select_related("parent", "key")):
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
        outside = {r["expected"] for p in family if p.pk not in admitted_ids or p.split != probe.split
                   for r in p.key.key.get("read_targets", [])}
        packets = {e.get("text", "") for p in family if p.pk in admitted_ids
                   for e in p.gold_view.get("recognition_packet", [])}
        if outside & packets:
            left_out[problem_id] = "a +GT packet carries the read target of a probe outside this release"
            continue
        kept.append(probe)
    return kept, left_out


def _release_probes(split: str, synthetic: bool):
    probes = (Probe.objects.filter(split=RELEASE_SPLITS[split]).select_related("parent", "parent__source", "key")
              .prefetch_related("views", "parent__images").order_by("logical_probe_id"))
    if synthetic:
        for probe in probes.exclude(state=Probe.State.SUPERSEDED).exclude(state=Probe.State.REJECTED):
            ids = {probe.parent.problem_id, probe.parent.source.name}
            if not any(i.startswith("SYNTHETIC") for i in ids) and not probe.parent.meta.get("synthetic"):
                raise ApplicationError("Only synthetic sources may be exported as a synthetic example.",
                                       code="SYNTHETIC_DATA_CANNOT_BE_BENCHMARK_RELEASE")
            yield probe
        return
    yield from probes.filter(state=Probe.State.APPROVED)


def _freeze(probe: Probe, split: str, actor: Any, synthetic: bool) -> dict[str, Any]:
    key = dict(probe.key.key)
    if probe.state != Probe.State.APPROVED:  # synthetic example only: the packet as it would be approved
        key["packet_plan"] = prospective_plan(key["packet_plan"])
    packet_ok = key["packet_plan"]["state"] == "approved_nonempty"
    attachments = _attachments(probe)
    public_raw = {"messages": probe.raw_messages, "attachments": attachments}
    public_gold = {"messages": probe.gold_messages, "attachments": attachments} if packet_ok else None
    core = {"private_core": key, "raw_view": probe.raw_view, "gold_view": probe.gold_view,
            "public_raw": public_raw, "public_gold": public_gold, "displays": probe.key.displays}
    content_root = digest(core)
    authorization = {"mode": "synthetic_example" if synthetic else "individual_review",
                     "review_target_root": probe.review_target_root,
                     "human_item_review": "not_sampled" if synthetic else "approved_individual",
                     "release_approver": getattr(actor, "username", "") or "cli", "split": split}
    instance_id = "PAI-" + digest({"content_root": content_root, "authorization": authorization})
    private = {**key, "instance_id": instance_id, "content_root": content_root, "instance_review_refs": ["qa-instance"]}
    envelope = {"schema_version": "physalign_envelope_v2_1", "logical_probe_id": probe.logical_probe_id,
                "variant_id": "main", "instance_id": instance_id, "language": probe.language,
                "content_root": content_root, "public_raw_hash": digest(public_raw),
                "public_gold_hash": digest(public_gold), "private_hash": digest(private)}
    meta = {"task_id": probe.task_id, "interface": probe.interface, "split": split}
    return {"envelope": envelope, "private": private, "core": core, "authorization": authorization, "meta": meta}


def _attachments(probe: Probe) -> list[dict[str, Any]]:
    originals = {img.image_id: img for img in probe.parent.images.all()}
    views = {v.view_id: v for v in probe.views.all()}
    result = []
    for asset_id in probe.attachment_ids:
        if asset_id in views:
            v = views[asset_id]
            result.append({"asset_id": asset_id, "path": f"images/{v.bytes_sha256}.png", "sha256": v.bytes_sha256,
                           "width": v.width, "height": v.height})
        else:
            img = originals[asset_id]
            suffix = Path(img.file.name).suffix.lower()
            result.append({"asset_id": asset_id, "path": f"images/{img.sha256}{suffix}", "sha256": img.sha256,
                           "width": img.width, "height": img.height})
    return result


def _collect_images(probes: list[Probe]) -> dict[str, tuple[str, bytes]]:
    images: dict[str, tuple[str, bytes]] = {}
    for probe in probes:
        for view in probe.views.all():
            images[view.bytes_sha256] = (".png", bytes(view.png))
        for img in probe.parent.images.all():
            if img.image_id in probe.attachment_ids and img.sha256 not in images:
                with img.file.open("rb") as handle:
                    images[img.sha256] = (Path(img.file.name).suffix.lower(), handle.read())
    return images


def build_public(frozen: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The public records, rebuilt from frozen items only (used by export and by validation)."""
    raw, gold = [], []
    for item in sorted(frozen, key=lambda f: f["envelope"]["logical_probe_id"]):
        for condition, target in (("raw", raw), ("gold", gold)):
            public = item["core"][f"public_{condition}"]
            if public is None:
                continue
            target.append({"schema_version": PUBLIC_SCHEMA, "instance_id": item["envelope"]["instance_id"],
                           "logical_probe_id": item["envelope"]["logical_probe_id"],
                           "task_id": item["meta"]["task_id"], "interface": item["meta"]["interface"],
                           "language": item["envelope"]["language"], "split": item["meta"]["split"],
                           "condition": condition,
                           "input": {"messages": {"system": public["messages"]["system"],
                                                  "user": public["messages"]["user"]},
                                     "attachments": public["attachments"]}})
    return raw, gold


def _membership(item: dict[str, Any], probe: Probe) -> dict[str, Any]:
    key = item["private"]
    return {"logical_probe_id": probe.logical_probe_id, "instance_id": key["instance_id"],
            "problem_id": probe.parent.problem_id, "group_id": probe.parent_group_id,
            "content_group_hint": probe.content_group_hint, "interface": probe.interface,
            "split": item["meta"]["split"], "B": True, "L": bool(key["joint_eligible"]),
            "P": key["packet_plan"]["state"] == "approved_nonempty",
            "human_item_review": item["authorization"]["human_item_review"]}


def _pools(members: list[dict[str, Any]]) -> dict[str, Any]:
    pools = {}
    for pool in ("B", "L", "P"):
        chosen = [m for m in members if m[pool]]
        pools[pool] = {"probe_ids": sorted(m["logical_probe_id"] for m in chosen),
                       "mother_ids": sorted({m["problem_id"] for m in chosen})}
    return pools


def _source_private(probes: list[Probe]) -> dict[str, Any]:
    result = {}
    for probe in probes:
        parent = probe.parent
        if parent.problem_id in result:
            continue
        names = sorted({p.get("name", "") for p in _pass4(parent).get("physical_nodes", []) if p.get("name")})
        result[parent.problem_id] = {"answer": parent.answer, "solution": parent.solution, "entity_names": names}
    return result


def _pass4(parent: ParentProblem) -> dict[str, Any]:
    doc = parent.passes.filter(pass_no=4).first()
    return doc.document if doc else {}


def _release_manifest(split: str, synthetic: bool, members: list[dict[str, Any]], raw: list[Any],
                      gold: list[Any]) -> dict[str, Any]:
    pools = _pools(members)
    manifest = {"schema_version": "native_data_release_v1", "artifact_mode": SYNTHETIC if synthetic else REVIEWED,
                "split": split, "approval_mode": "synthetic_example" if synthetic else "individual_review",
                "release_implementation": "physalign_studio_probes_v1", "attachment_paths_relative_to": "public",
                "counts": {p: {"probes": len(v["probe_ids"]), "mothers": len(v["mother_ids"])} for p, v in pools.items()}}
    manifest["release_id"] = release_id_for(manifest, members, raw, gold)
    return manifest


def release_id_for(manifest: dict[str, Any], members: list[Any], raw: list[Any], gold: list[Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "release_id"}
    return "NREL-" + digest({"manifest": body, "members": members,
                             "public": {"raw": [digest(r) for r in raw], "gold": [digest(g) for g in gold]}})


def _readme(manifest: dict[str, Any]) -> str:
    return (f"# {manifest['release_id']}\n\nSplit: {manifest['split']}. Mode: {manifest['artifact_mode']}.\n\n"
            "`public/` is what a model may see. `private/` holds the scoring keys; never share it with a model.\n")


def _write(path: Path, value: Any) -> None:
    path.write_bytes(write_json_bytes(value))


# Sealing ---------------------------------------------------------------------------------------------
def file_manifest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "FILE_MANIFEST.json"}


def seal_directory(root: Path) -> None:
    _write(root / "FILE_MANIFEST.json", file_manifest(root))


# Validation ------------------------------------------------------------------------------------------
@dataclass
class ValidationReport:
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def add(self, code: str, detail: str = "") -> None:
        self.errors.append({"code": code, "detail": detail})


def release_validate(path: Path) -> ValidationReport:
    """Rebuild the public part from the frozen items and refuse anything that differs or leaks."""
    root, report = Path(path), ValidationReport()
    try:
        manifest = parse_json((root / "release.json").read_bytes())
        sealed = parse_json((root / "FILE_MANIFEST.json").read_bytes())
        frozen = [parse_json(p.read_bytes()) for p in sorted((root / "private" / "frozen").glob("*.json"))]
        raw_bytes = (root / "public" / "qa_raw.json").read_bytes()
        gold_bytes = (root / "public" / "qa_gold.json").read_bytes()
        members = parse_json((root / "private" / "membership.json").read_bytes())
        private_strings = parse_json((root / "private" / "source_private.json").read_bytes())
    except (OSError, ValueError) as error:
        report.add("RELEASE_FILES_MISSING_OR_INVALID", str(error))
        return report
    if sealed != file_manifest(root):
        report.add("FILE_MANIFEST_MISMATCH")
    for item in frozen:
        _check_frozen(item, report)
    raw, gold = build_public(frozen)
    if raw_bytes != write_json_bytes(raw) or gold_bytes != write_json_bytes(gold):
        report.add("PUBLIC_QA_REBUILD_MISMATCH")
    public_records = parse_json(raw_bytes) + parse_json(gold_bytes)
    declared = _check_public_records(public_records, report)
    _check_public_files(root, declared, report)
    _leakage_scan(root, frozen, private_strings, report)
    if manifest.get("release_id") != release_id_for(manifest, members, raw, gold):
        report.add("RELEASE_ID_MISMATCH")
    return report


def _check_frozen(item: dict[str, Any], report: ValidationReport) -> None:
    envelope, private = item["envelope"], item["private"]
    content_root = digest(item["core"])
    if envelope["content_root"] != content_root or private["content_root"] != content_root:
        report.add("CONTENT_ROOT_MISMATCH", envelope["logical_probe_id"])
    if envelope["instance_id"] != "PAI-" + digest({"content_root": content_root, "authorization": item["authorization"]}):
        report.add("INSTANCE_ID_MISMATCH", envelope["logical_probe_id"])
    if envelope["private_hash"] != digest(private):
        report.add("PRIVATE_HASH_MISMATCH", envelope["logical_probe_id"])


def _check_public_records(records: list[dict[str, Any]], report: ValidationReport) -> dict[str, str]:
    declared: dict[str, str] = {}
    for record in records:
        if set(record) != PUBLIC_KEYS or set(record["input"]) != {"messages", "attachments"} \
                or set(record["input"]["messages"]) != {"system", "user"}:
            report.add("PUBLIC_FIELD_FORBIDDEN", record.get("logical_probe_id", "?"))
            continue
        for attachment in record["input"]["attachments"]:
            if set(attachment) != ATTACHMENT_KEYS or Path(attachment["path"]).suffix not in IMAGE_SUFFIXES:
                report.add("PUBLIC_FIELD_FORBIDDEN", attachment.get("path", "?"))
                continue
            declared[attachment["path"]] = attachment["sha256"]
    return declared


def _check_public_files(root: Path, declared: dict[str, str], report: ValidationReport) -> None:
    public = root / "public"
    allowed = {"qa_raw.json", "qa_gold.json"} | set(declared)
    for path in sorted(public.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(public).as_posix()
        if relative not in allowed:
            report.add("UNDECLARED_PUBLIC_FILE_POSSIBLE_PRIVATE_LEAK", relative)
        elif relative in declared and bytes_digest(path.read_bytes()) != declared[relative]:
            report.add("PUBLIC_IMAGE_CHANGED", relative)
    for relative in declared:
        if not (public / relative).is_file():
            report.add("PUBLIC_IMAGE_MISSING", relative)


def _global_tokens(item: dict[str, Any]) -> list[tuple[str, str]]:
    key = item["private"]
    tokens = [(t["id"], "canonical entity id") for t in key["candidate_map"].values()]
    for meta in key["anchor_map"].values():
        tokens.extend((sid, "source record id") for sid in meta["source_ids"])
    tokens.extend((sha, "source file hash") for sha in key["source_hashes"].values())
    return tokens + [("candidate_map", "private key field"), ("gold_targets", "private key field")]


def _probe_tokens(item: dict[str, Any], private_strings: dict[str, Any]) -> list[tuple[str, str]]:
    """Private strings of one probe, checked against that probe's generated (non-source) public text."""
    key = item["private"]
    gold = {g["id"] for g in key["gold_targets"]}
    binding = key["response_contract"]["binding_key"]
    tokens = [(f'"{binding}": "{alias}"', "gold answer") for alias, t in key["candidate_map"].items()
              if t["id"] in gold]
    source = private_strings.get(key["problem_id"], {})
    context = item["core"]["raw_view"]["context"]
    public_text = "\n".join([context["stem"], context["query"], *(o["text"] for o in context["options"])])
    for name in ("answer", "solution"):
        value = (source.get(name) or "").strip()
        if len(value) >= 4 and value not in public_text:
            tokens.append((value, name))
    tokens.extend((n, "entity name") for n in source.get("entity_names", []) if len(n) >= 3 and n not in public_text)
    return tokens


def _generated_text(record: dict[str, Any], context: dict[str, Any]) -> str:
    """What the compiler wrote into a public record, with the original source text taken out."""
    user = re.sub(r"\[/?[REH][0-9]+\]", "", record["input"]["messages"]["user"])
    options = json.dumps(context["options"], ensure_ascii=False)
    for text in sorted((context["stem"], context["query"], options), key=len, reverse=True):
        if text:
            user = user.replace(text, "")
    return "\n".join([user, record["input"]["messages"]["system"], json.dumps(record["input"]["attachments"])])


def _leakage_scan(root: Path, frozen: list[dict[str, Any]], private_strings: dict[str, Any],
                  report: ValidationReport) -> None:
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
             for p in (root / "public").rglob("*.json")}
    for item in frozen:
        for token, reason in _global_tokens(item):
            for name, text in files.items():
                if token in text:
                    report.add("PRIVATE_STRING_IN_PUBLIC", f"{reason} in {name}")
    by_id = {item["envelope"]["logical_probe_id"]: item for item in frozen}
    for name in ("public/qa_raw.json", "public/qa_gold.json"):
        for record in json.loads(files.get(name, "[]")):
            item = by_id.get(record.get("logical_probe_id"))
            if item is None or "input" not in record:
                report.add("PUBLIC_RECORD_WITHOUT_FROZEN_ITEM", record.get("logical_probe_id", "?"))
                continue
            _scan_record(record, item, private_strings, name, report)


def _scan_record(record: dict[str, Any], item: dict[str, Any], private_strings: dict[str, Any], name: str,
                 report: ValidationReport) -> None:
    generated = _generated_text(record, item["core"]["raw_view"]["context"])
    for token, reason in _probe_tokens(item, private_strings):
        if token in generated:
            report.add("PRIVATE_STRING_IN_PUBLIC", f"{reason} in {name} ({record['logical_probe_id']})")
    packet = item["core"]["gold_view"]["recognition_packet"]
    if record["condition"] == "raw" and packet and json.dumps(packet, ensure_ascii=False) in generated:
        report.add("PRIVATE_STRING_IN_PUBLIC", f"reading in the raw condition ({record['logical_probe_id']})")


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
        raise ApplicationError(f"Not a release directory: {error}", code="RELEASE_FILES_MISSING_OR_INVALID") from error
    if sealed != file_manifest(root):
        raise ApplicationError("FILE_MANIFEST.json does not match the files.", code="FILE_MANIFEST_MISMATCH")
    release_id = manifest.get("release_id", "")
    if not re.fullmatch(r"NREL-[0-9a-f]{64}", release_id):
        raise ApplicationError("release.json has no valid release_id.", code="RELEASE_ID_INVALID")
    if Release.objects.filter(release_id=release_id).exists():
        raise ApplicationError("This release is already imported.", code="RELEASE_EXISTS", status=409)
    release = Release.objects.create(
        release_id=release_id, split=manifest.get("split", ""), origin=Release.Origin.IMPORTED,
        artifact_mode=manifest.get("artifact_mode", ""), path=str(root.resolve()), manifest=manifest,
        counts=manifest.get("counts", {}), created_by=actor if getattr(actor, "pk", None) else None)
    _store_items(release, raw, gold, mappings, members)
    return release


def _store_items(release: Release, raw: list[Any], gold: list[Any], mappings: list[Any], members: list[Any]) -> None:
    gold_by = {g["logical_probe_id"]: g for g in gold}
    key_by = {m["logical_probe_id"]: m for m in mappings}
    member_by = {m["logical_probe_id"]: m for m in members}
    ReleaseItem.objects.bulk_create([ReleaseItem(
        release=release, logical_probe_id=r["logical_probe_id"], instance_id=r["instance_id"],
        problem_id=key_by.get(r["logical_probe_id"], {}).get("problem_id", ""), interface=r.get("interface", ""),
        public_raw=r, public_gold=gold_by.get(r["logical_probe_id"]), private_mapping=key_by.get(r["logical_probe_id"], {}),
        membership=member_by.get(r["logical_probe_id"], {})) for r in raw])


# Zip download ----------------------------------------------------------------------------------------
def release_zip_build(*, release_pk: int) -> Release:
    """Zip the release's public part (progress in ``zip_progress``)."""
    release = Release.objects.get(pk=release_pk)
    Release.objects.filter(pk=release.pk).update(zip_status="running", zip_progress=0)
    root = Path(release.path)
    files = sorted(p for p in (root / "public").rglob("*") if p.is_file())
    target = root.parent / f"{release.release_id}.public.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for n, path in enumerate(files, 1):
            archive.write(path, path.relative_to(root).as_posix())
            if n % 20 == 0 or n == len(files):
                Release.objects.filter(pk=release.pk).update(zip_progress=int(100 * n / len(files)))
    Release.objects.filter(pk=release.pk).update(zip_status="ready", zip_progress=100, zip_path=str(target))
    release.refresh_from_db()
    return release
