"""Input and output records of the compiler (plain dataclasses, no ORM)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceImage:
    """One original image of a parent problem, with its stored bytes."""

    image_id: str
    data: bytes
    width: int
    height: int
    suffix: str = ".png"


@dataclass(frozen=True)
class ParentSource:
    """Everything the compiler may read about one parent problem.

    ``passes`` holds the approved, hash-fresh Pass 1–4 documents keyed ``pass1``..``pass4``.
    There is deliberately no field for the answer, the solution or Pass 5 (answer-blind, §3.2).
    """

    problem_id: str
    source_dataset: str
    source_split: str
    source_sample_id: str
    language: str
    stem: str
    query: str
    options: list[dict[str, str]]
    images: list[SourceImage]
    passes: dict[str, dict[str, Any]]
    pass4_reviewer: str = ""
    span_rule_approved: bool = False
    # SHA-256 of the Kit's own source files where known (pass1..pass4 file bytes, manifest, review); see
    # annotation.selectors.kit_source_hashes. Missing names fall back to the canonical form.
    source_file_hashes: dict[str, str] = field(default_factory=dict)


@dataclass
class BlockedGroup:
    """A group the compiler refused: becomes a CompileIssue row (never a silent drop)."""

    task_id: str
    code: str
    reasons: list[str]
    scope: list[str]
    group_id: str = ""
    detail: str = ""


@dataclass
class RenderedAsset:
    view_id: str
    png: bytes
    record: dict[str, Any]


@dataclass
class CompiledProbe:
    logical_probe_id: str
    task_id: str
    interface: str
    raw_view: dict[str, Any]
    gold_view: dict[str, Any]
    key: dict[str, Any]
    raw_messages: dict[str, str]
    gold_messages: dict[str, str]
    attachment_ids: list[str]
    displays: list[dict[str, Any]]
    views: list[RenderedAsset]
    native_query: dict[str, Any]
    metadata: dict[str, Any]
    content_root: str
    review_target_root: str
    closure_root: str
    packet_review_root: str
    evidence_group: str
    # Asset records of everything the probe shows: the original images, then the rendered views (Kit core).
    assets: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParentResult:
    problem_id: str
    group_id: str
    content_group_hint: str
    source_identity: str
    probes: list[CompiledProbe] = field(default_factory=list)
    blocked: list[BlockedGroup] = field(default_factory=list)
    observations: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)
    render_seconds: float = 0.0
