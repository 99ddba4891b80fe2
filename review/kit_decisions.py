"""Kit review-decision files (``physalign_decisions_v1``, ``native_release_reviews_v1``) and the Kit draft
that binds them (Kit §6, §7; ``catalog.PRIVATE.json`` + ``probes/<id>/preview.PRIVATE.json``). Pure: reads
files and checks rules, writes nothing.

The design: mapping through an imported Kit draft, and why: a Kit ``review_target_root`` hashes
the Kit's whole prospective core, including ``implementation_hashes`` (the bytes of every converter file),
the Pillow version in ``renderer_profile``, the view PNG bytes of the Kit's Pillow/zlib build and the
``manifest``/``review`` source files of a Kit workspace. Recomputing that root here instead would only
be right for one Kit version on one Pillow build, and wrong without notice on any other. Mapping through the draft is
exact everywhere: the Kit's roots are taken from the Kit's own draft, checked to be what the Kit computes
from its own preview (``content_root = digest(core)``, ``review_target_root = digest(prospective core)``,
``catalog_root = digest(catalog)``), and bound to one of our probes only when the Kit probe's private key,
raw and gold views, messages, attachments, render manifest and view pixels equal ours. A decision then
counts for our probe only while our probe is unchanged since that check.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, cast

from kit.canonical import bytes_digest, digest
from kit.review import CONFIRMATIONS, DECISION_BASE_FIELDS, SEVERITIES
from physalign_site import jsonsafety
from probes.compiler.probe import prospective_plan

LEGACY = "physalign_decisions_v1"
NATIVE = "native_release_reviews_v1"
BASE_FIELDS = DECISION_BASE_FIELDS
DEVELOPMENT_SPLIT = "development_reserved"
# Key fields the Kit derives from files a Kit workspace has and our parents do not (the canonical
# re-serializations of the workspace manifest row and review state): compared when we hold them too.
KIT_ONLY_SOURCE_HASHES = ("manifest", "review")


class KitFileError(ValueError):
    """A refusal with the Kit's code (e.g. ``REVIEW_TARGET_STALE``) and what it concerns."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code, self.detail = code, detail


def require(condition: Any, code: str, detail: str = "") -> None:
    if not condition:
        raise KitFileError(code, detail)


# The draft ---------------------------------------------------------------------------------------------------
@dataclass
class KitDraft:
    root: Path
    catalog: dict[str, Any]
    catalog_root: str
    previews: dict[str, dict[str, Any]]
    development_problem_ids: set[str]
    project_id: str = ""
    items: dict[str, dict[str, Any]] = field(default_factory=dict)


def _relative(root: Path, rel: Any) -> Path:
    require(isinstance(rel, str) and rel and "\\" not in rel, "DRAFT_PATH_INVALID", str(rel))
    pure = PurePosixPath(rel)
    require(not pure.is_absolute() and ".." not in pure.parts, "DRAFT_PATH_INVALID", rel)
    return root.joinpath(*pure.parts)


def _read(root: Path, rel: str, manifest: dict[str, str]) -> Any:
    path = _relative(root, rel)
    require(path.is_file() and not path.is_symlink(), "DRAFT_FILE_MISSING", rel)
    data = path.read_bytes()
    require(manifest.get(rel) == bytes_digest(data), "DRAFT_DESCRIPTOR_BYTES_CHANGED", rel)
    return _parse(data, rel)


def _parse(data: bytes, rel: str) -> Any:
    """A file of an uploaded draft through the one strict parser (``physalign_site.jsonsafety``: duplicate
    keys, NaN, bad UTF-8, nesting and size refused); a refusal is the Kit's ``DRAFT_JSON_INVALID`` and why."""
    try:
        return jsonsafety.loads(data)
    except ValueError as error:
        raise KitFileError("DRAFT_JSON_INVALID", f"{rel}: {error}") from error


def load_draft(path: Path) -> KitDraft:
    """A Kit native draft directory, or a Kit review project (``project.json`` + ``source/``) around one."""
    root, project_id = Path(path), ""
    if (root / "project.json").is_file() and (root / "source").is_dir():
        project = _parse((root / "project.json").read_bytes(), "project.json")
        require(
            isinstance(project, dict) and project.get("schema_version") == "native_review_project_v1",
            "PROJECT_SCHEMA",
        )
        require(
            project.get("project_id")
            == "NRP-" + digest({k: v for k, v in project.items() if k != "project_id"}),
            "PROJECT_ROOT_CHANGED",
        )
        root, project_id = root / "source", project["project_id"]
    require((root / "FILE_MANIFEST.json").is_file(), "DRAFT_FILE_MISSING", "FILE_MANIFEST.json")
    manifest = _parse((root / "FILE_MANIFEST.json").read_bytes(), "FILE_MANIFEST.json")
    require(isinstance(manifest, dict), "DRAFT_JSON_INVALID", "FILE_MANIFEST.json")
    catalog = _read(root, "catalog.PRIVATE.json", manifest)
    require(
        isinstance(catalog, dict)
        and catalog.get("schema_version") == "physalign_draft_catalog_v1"
        and isinstance(catalog.get("probes"), list),
        "CATALOG_SCHEMA",
    )
    require(catalog.get("native_profile") == "native_binding_draft_v1", "NATIVE_SOURCE_REQUIRED")
    catalog_root = digest(catalog)
    if project_id:
        require(project["source_catalog_root"] == catalog_root, "PROJECT_SOURCE_CATALOG_CHANGED")
    development = set()
    if "development_candidates.json" in manifest:
        candidates = _read(root, "development_candidates.json", manifest)
        require(isinstance(candidates, dict), "DRAFT_JSON_INVALID", "development_candidates.json")
        require(
            candidates.get("membership_root") == catalog.get("membership_root"),
            "DEVELOPMENT_MEMBERSHIP_STALE",
        )
        development = set(candidates.get("problem_ids", []))
    items, previews = {}, {}
    for item in catalog["probes"]:
        require(isinstance(item, dict), "CATALOG_SCHEMA", "a catalog probe entry is not an object")
        qid = item.get("logical_probe_id")
        require(isinstance(qid, str) and qid not in items, "CATALOG_DUPLICATE_PROBE", str(qid))
        items[qid] = item
        previews[qid] = _read(root, item.get("preview", ""), manifest)
        require(isinstance(previews[qid], dict), "PREVIEW_SCHEMA", qid)
        if item.get("split") == DEVELOPMENT_SPLIT:
            require(isinstance(item.get("problem_id"), str), "CATALOG_SCHEMA", qid)
            development.add(item["problem_id"])
    return KitDraft(
        root=root,
        catalog=catalog,
        catalog_root=catalog_root,
        previews=previews,
        development_problem_ids=development,
        project_id=project_id,
        items=items,
    )


def prospective_core(core: dict[str, Any]) -> dict[str, Any]:
    """The Kit's prospective core (review_workflow.prospective): the same core with the packet approved."""
    plan = core["private_core"].get("packet_plan")
    require(isinstance(plan, dict) and plan.get("state") == "pending_review", "NOT_PENDING_DRAFT")
    approved = copy.deepcopy(core)
    approved["private_core"]["packet_plan"] = prospective_plan(plan)
    return approved


def verified_roots(item: dict[str, Any], preview: dict[str, Any]) -> tuple[str, str]:
    """(content_root, review_target_root) of one Kit probe, each recomputed from the Kit's own preview."""
    core = preview.get("core")
    require(
        isinstance(core, dict) and isinstance(core.get("private_core"), dict),
        "PREVIEW_SCHEMA",
        item["logical_probe_id"],
    )
    require(
        digest(core) == preview.get("content_root"),
        "KIT_PREVIEW_CONTENT_ROOT_MISMATCH",
        item["logical_probe_id"],
    )
    root = digest(prospective_core(cast(dict[str, Any], core)))  # a dict: required above
    require(
        root == item.get("review_target_root"), "KIT_REVIEW_TARGET_ROOT_MISMATCH", item["logical_probe_id"]
    )
    return preview["content_root"], root


# Our side of the comparison ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OurProbe:
    key: dict[str, Any]
    raw_view: dict[str, Any]
    gold_view: dict[str, Any]
    raw_messages: dict[str, str]
    gold_messages: dict[str, str]
    attachment_ids: list[str]
    displays: list[dict[str, Any]]
    pixels: dict[str, str]  # asset id (original image or view) -> pixels_sha256
    bytes: dict[str, str]  # asset id -> bytes_sha256


def differences(core: dict[str, Any], ours: OurProbe) -> list[str]:
    """The fields where the Kit probe differs from ours (empty: the same probe, so the same review target)."""
    diff = []
    kit_key = copy.deepcopy(core["private_core"])
    our_key = copy.deepcopy(ours.key)
    for name in KIT_ONLY_SOURCE_HASHES:
        if name not in our_key.get("source_hashes", {}):
            kit_key.get("source_hashes", {}).pop(name, None)
    for name in sorted(set(kit_key) | set(our_key)):
        if kit_key.get(name) != our_key.get(name):
            diff.append(f"private_core.{name}")
    checks = {
        "raw_view": ours.raw_view,
        "gold_view": ours.gold_view,
        "displays": ours.displays,
        "public_raw": {"messages": ours.raw_messages, "attachment_ids": ours.attachment_ids},
        "public_gold": {"messages": ours.gold_messages, "attachment_ids": ours.attachment_ids},
    }
    diff += [name for name, value in checks.items() if core.get(name) != value]
    assets = core.get("assets", {})
    if set(assets) != set(ours.pixels):
        diff.append("assets")
    else:
        diff += [
            f"assets.{a}.pixels_sha256"
            for a in sorted(assets)
            if assets[a].get("pixels_sha256") != ours.pixels[a]
        ]
    return diff


def same_bytes(core: dict[str, Any], ours: OurProbe) -> bool:
    """Whether every asset's bytes equal ours too (they do on the Kit's Pillow/zlib build); provenance only."""
    return {a: r.get("bytes_sha256") for a, r in core.get("assets", {}).items()} == ours.bytes


# Decision files --------------------------------------------------------------------------------------------------
def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def normalize_decisions(
    doc: Any, draft: KitDraft, *, context_root: str = "", role: str = "individual"
) -> dict[str, dict[str, Any]]:
    """Every decision of one file, checked as the Kit checks it (native_release_support.normalize_reviews and
    tools/check_review.py), or :class:`KitFileError` for the whole file. A ``pending`` decision (the Kit's
    export of a partly filled form) stays pending. Only development probes of the draft are accepted: an
    individual decision settles a development probe in our review model (the Kit's check_review rule)."""
    require(isinstance(doc, dict), "REVIEW_FILE_FIELDS")
    legacy = doc.get("schema_version") == LEGACY
    if legacy:
        require(set(doc) == {"schema_version", "catalog_root", "decisions"}, "REVIEW_FILE_FIELDS")
    else:
        require(
            set(doc) == {"schema_version", "catalog_root", "context_root", "role", "decisions"},
            "REVIEW_FILE_FIELDS",
        )
        require(
            doc["schema_version"] == NATIVE
            and doc["context_root"] == (context_root or draft.project_id)
            and doc["role"] == role,
            "REVIEW_CONTEXT_OR_ROLE_MISMATCH",
        )
    require(
        role == "individual", "LEGACY_REVIEW_NOT_RANDOM_AUDIT" if legacy else "AUDIT_ROLE_IMPORT_UNSUPPORTED"
    )
    require(doc["catalog_root"] == draft.catalog_root, "REVIEW_CATALOG_STALE")
    require(isinstance(doc["decisions"], list), "REVIEW_LIST_REQUIRED")
    allowed = {
        q for q, item in draft.items.items() if item.get("problem_id") in draft.development_problem_ids
    }
    fields = set(BASE_FIELDS) if legacy else {*BASE_FIELDS, "severity", "sequence"}
    found: dict[str, dict[str, Any]] = {}
    for original in doc["decisions"]:
        require(isinstance(original, dict) and set(original) == fields, "REVIEW_DECISION_FIELDS")
        d = copy.deepcopy(original)
        qid = d["logical_probe_id"]
        require(
            isinstance(qid, str) and qid in allowed and qid not in found,
            "UNKNOWN_NONDEV_OR_DUPLICATE_PROBE",
            str(qid),
        )
        require(d["review_target_root"] == draft.items[qid]["review_target_root"], "REVIEW_TARGET_STALE", qid)
        require(d["status"] in ("pending", "approved", "rejected"), "REVIEW_STATUS_INVALID", qid)
        require(
            all(isinstance(d[k], str) for k in ("reviewer", "blind_answer", "note")),
            "REVIEW_TEXT_REQUIRED",
            qid,
        )
        require(
            isinstance(d["confirmations"], dict) and set(d["confirmations"]) == set(CONFIRMATIONS),
            "REVIEW_CONFIRMATIONS_FIELDS",
            qid,
        )
        require(all(type(v) is bool for v in d["confirmations"].values()), "REVIEW_BOOLEAN_REQUIRED", qid)
        if legacy:
            d.update(severity="unresolved" if d["status"] == "rejected" else "none", sequence=None)
        require(d["severity"] in SEVERITIES, "REVIEW_SEVERITY_INVALID", qid)
        require(
            d["sequence"] is None or (type(d["sequence"]) is int and d["sequence"] > 0),
            "REVIEW_SEQUENCE_INVALID",
            qid,
        )
        if d["status"] != "pending":
            require(_text(d["reviewer"]), "REVIEWER_REQUIRED", qid)
            require(_text(d["blind_answer"]), "BLIND_ANSWER_REQUIRED", qid)
        if d["status"] == "approved":
            require(
                d["severity"] in ("none", "minor") and all(d["confirmations"].values()),
                "APPROVAL_CHECKS_REQUIRED",
                qid,
            )
        elif d["status"] == "rejected":
            require(d["severity"] not in ("none", "minor"), "REJECTION_NEEDS_DEFECT_CLASS", qid)
            require(_text(d["note"]), "REJECTION_NOTE_REQUIRED", qid)
        found[qid] = d
    return found


# Writing a decision file: our decisions leaving for the Kit ------------------------------------------------------
NO_CONFIRMATIONS = dict.fromkeys(CONFIRMATIONS, False)
# The fields by which a decision in a file is the one recorded here (``reviewer`` is our username as text).
MADE_HERE_FIELDS = ("status", "reviewer", "blind_answer", "confirmations", "note")


@dataclass(frozen=True)
class LegacyDecision:
    """One decision of a ``physalign_decisions_v1`` file (Kit §6.2), on the Kit's ``review_target_root``.
    The defaults are a probe nobody decided yet, as the Kit's review page exports a partly filled form:
    ``pending``, empty texts, every confirmation false."""

    logical_probe_id: str
    review_target_root: str
    status: str = "pending"
    reviewer: str = ""
    blind_answer: str = ""
    confirmations: dict[str, bool] = field(default_factory=lambda: dict(NO_CONFIRMATIONS))
    note: str = ""

    def record(self) -> dict[str, Any]:
        return {
            "logical_probe_id": self.logical_probe_id,
            "review_target_root": self.review_target_root,
            "status": self.status,
            "reviewer": self.reviewer,
            "blind_answer": self.blind_answer,
            "confirmations": {k: self.confirmations.get(k) is True for k in CONFIRMATIONS},
            "note": self.note,
        }


def legacy_document(catalog_root: str, decisions: list[LegacyDecision]) -> dict[str, Any]:
    """The ``physalign_decisions_v1`` document of one Kit draft, its decisions in probe id order."""
    return {
        "schema_version": LEGACY,
        "catalog_root": catalog_root,
        "decisions": [d.record() for d in sorted(decisions, key=lambda d: d.logical_probe_id)],
    }


def stored_draft(
    *, catalog: dict[str, Any], catalog_root: str, development_problem_ids: list[str], project_id: str
) -> KitDraft:
    """A draft as an import stored it (its catalog and development parents), enough for
    :func:`normalize_decisions`: the previews are not kept."""
    return KitDraft(
        root=Path("."),
        catalog=catalog,
        catalog_root=catalog_root,
        previews={},
        development_problem_ids=set(development_problem_ids),
        project_id=project_id,
        items={p["logical_probe_id"]: p for p in catalog["probes"]},
    )


def development_probe_ids(draft: KitDraft) -> set[str]:
    """The draft's probes a decision file may decide (those of its development parents: check_review's rule)."""
    return {q for q, item in draft.items.items() if item.get("problem_id") in draft.development_problem_ids}


def is_decision_made_here(d: dict[str, Any], ours: dict[str, Any], *, legacy: bool) -> bool:
    """Whether a checked decision of a file (:func:`normalize_decisions`) is the decision recorded here
    (``ours``: :meth:`LegacyDecision.record` plus ``severity`` and ``sequence``), e.g. our own export read
    back: the same status, reviewer, blind answer, confirmations and note; in a native file also the same
    severity and sequence (a legacy file has neither, its severity is derived from the status)."""
    fields = MADE_HERE_FIELDS if legacy else (*MADE_HERE_FIELDS, "severity", "sequence")
    return all(d.get(k) == ours.get(k) for k in fields)
