"""Reads for probes: compiler inputs from the annotation tables, probe lists, release items."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from django.db.models import Count, QuerySet

from annotation.models import ParentProblem, PassDocument
from annotation.selectors import kit_source_hashes
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param
from probes.compiler import CompileError, ParentSource, SourceImage

from .models import CompileIssue, CompileRun, Probe, Release


def release_by_reference(reference: str) -> Release:
    """A release named by its id (``NREL-…``) or its row number, as the commands and forms accept it."""
    text = reference.strip()
    if text.startswith("NREL-"):
        release = Release.objects.filter(release_id=text).first()
    else:
        number = int_param(text, name="release")  # None when blank: no release has that
        release = None if number is None else Release.objects.filter(pk=number).first()
    if release is None:
        raise ApplicationError(f"No release {text!r}.", code="release_not_found", status=404)
    return release


def compilable_parents() -> QuerySet[ParentProblem]:
    """Parents whose Passes 1–4 are all approved (freshness is re-checked per parent)."""
    return (
        ParentProblem.objects.exclude(status=ParentProblem.Status.EXCLUDED)
        .filter(passes__pass_no__lte=4, passes__status=PassDocument.Status.APPROVED)
        .annotate(approved=Count("passes"))
        .filter(approved=4)
        .order_by("problem_id")
    )


def parent_source_for(parent: ParentProblem) -> ParentSource:
    """The compiler's only view of a parent. Answer, solution and Pass 5 are never read."""
    if parent.status == ParentProblem.Status.EXCLUDED:
        raise CompileError("SOURCE_EXCLUDED", parent.problem_id)
    passes = {p.pass_no: p for p in parent.passes.all() if p.pass_no <= 4}
    documents: dict[str, dict[str, Any]] = {}
    for number in (1, 2, 3, 4):
        document = passes.get(number)
        if document is None or document.status != PassDocument.Status.APPROVED:
            raise CompileError("SOURCE_REVIEW_NOT_APPROVED", f"pass{number}")
        if not document.approval_is_fresh:
            raise CompileError("SOURCE_REVIEW_HASH_STALE", f"pass{number}")
        documents[f"pass{number}"] = document.document
    reviewer = passes[4].approver_label
    if not reviewer:
        raise CompileError("SOURCE_REVIEWER_MISSING", "pass4")
    images = []
    for image in parent.images.all():
        with image.file.open("rb") as handle:
            data = handle.read()
        name = image.file.name
        assert name is not None  # open() above refuses (ValueError) a file without a name
        images.append(
            SourceImage(
                image.image_id,
                data,
                image.width,
                image.height,
                PurePosixPath(name).suffix.lower() or ".png",
            )
        )
    return ParentSource(
        problem_id=parent.problem_id,
        source_dataset=parent.source.name,
        source_split=parent.source_split,
        source_sample_id=parent.source_sample_id,
        language=parent.language,
        stem=parent.stem,
        query=parent.query,
        options=list(parent.options),
        images=images,
        passes=documents,
        pass4_reviewer=reviewer,
        span_rule_approved=bool(parent.meta.get("span_rule_approved", False)),
        source_file_hashes=kit_source_hashes(parent=parent, passes=passes),
    )


def probe_list(*, interface: str = "", state: str = "", split: str = "", parent: str = "") -> QuerySet[Probe]:
    probes = Probe.objects.select_related("parent").exclude(state=Probe.State.SUPERSEDED)
    if interface:
        probes = probes.filter(interface=interface)
    if state:
        probes = probes.filter(state=state)
    if split:
        probes = probes.filter(split=split)
    if parent:
        probes = probes.filter(parent__problem_id=parent)
    return probes.order_by("parent__problem_id", "logical_probe_id")


def issues_by_code(run: CompileRun) -> list[dict[str, Any]]:
    rows = CompileIssue.objects.filter(run=run).values("code").annotate(n=Count("id")).order_by("-n", "code")
    grouped = []
    for row in rows:
        examples = list(CompileIssue.objects.filter(run=run, code=row["code"]).select_related("parent")[:20])
        grouped.append({"code": row["code"], "count": row["n"], "issues": examples})
    return grouped


def probe_parent_pairs(probes: Any) -> list[tuple[int, str]]:
    """``(parent pk, logical probe id)`` of each probe, for :func:`audit.disclosure.disclose`: ``probes`` is an
    iterable of Probe rows, or of ``(problem_id, logical_probe_id)`` pairs (release items: a release may name
    probes recompiled since, so the parent is found by its problem id)."""
    rows = list(probes)
    if not rows:
        return []
    if isinstance(rows[0], Probe):
        return [(p.parent_id, p.logical_probe_id) for p in rows]
    parents = dict(
        ParentProblem.objects.filter(problem_id__in={problem for problem, _ in rows}).values_list(
            "problem_id", "pk"
        )
    )
    return [(parents[problem], probe) for problem, probe in rows if problem in parents]
