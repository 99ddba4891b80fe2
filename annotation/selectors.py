"""Reads of problems and pass documents, shaped so that page and API query counts stay flat."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.lookups import Exact
from django.utils import timezone

from kit.canonical import bytes_digest, digest, write_json_bytes
from kit.passes.validator import ImageRef, checked_workspace_issues, context_for

from .models import (
    FRESH_APPROVAL,
    STALE_APPROVAL,
    ImportJob,
    ParentProblem,
    PassDocument,
    PassDocumentVersion,
    ProblemImage,
    Source,
)
from .physics.services import physics_issues


def parent_list(
    *,
    search: str = "",
    source: str = "",
    language: str = "",
    domain: str = "",
    status: str = "",
    work: str = "",
) -> QuerySet[ParentProblem]:
    qs = ParentProblem.objects.select_related("source").annotate(image_count=Count("images", distinct=True))
    if search:
        qs = qs.filter(
            Q(problem_id__icontains=search)
            | Q(stem__icontains=search)
            | Q(query__icontains=search)
            | Q(source_sample_id__icontains=search)
        )
    if source:
        by_pk = source.isascii() and source.isdigit() and len(source) <= 10
        qs = qs.filter(source_id=int(source)) if by_pk else qs.filter(source__name=source)
    if language:
        qs = qs.filter(language=language)
    if domain:
        qs = qs.filter(domain=domain)
    if status:
        qs = qs.filter(status=status)
    if work in WORK_STATES:
        qs = qs.filter(work_filter(work))
    return qs.order_by("problem_id")


def parent_detail_queryset() -> QuerySet[ParentProblem]:
    return ParentProblem.objects.select_related("source").prefetch_related(
        Prefetch("images", queryset=ProblemImage.objects.order_by("ordinal")),
        Prefetch("passes", queryset=PassDocument.objects.order_by("pass_no").select_related("approved_by")),
    )


def parent_facets() -> dict[str, list[str]]:
    return {
        "sources": list(Source.objects.order_by("name").values_list("name", flat=True)),
        "domains": list(
            ParentProblem.objects.exclude(domain="")
            .order_by("domain")
            .values_list("domain", flat=True)
            .distinct()
        ),
        "languages": [c[0] for c in ParentProblem.Language.choices],
        "statuses": [c[0] for c in ParentProblem.Status.choices],
    }


# --- single objects and pass state (API and services) ----------------------------------------------

ANNOTATION_PASSES = (1, 2, 3, 4)  # the answer-blind passes whose approval admits a parent (Kit §2.3)


# --- where annotation work stands (home pages, the problem list's "Work" filter, the pipeline board) ---


# A problem is in a work state when one of its passes 1–4 is (``to_start``: none of them exists yet, and it has a
# diagram: a text-only problem, such as the debate demo's, is solving work, never annotation work).
WORK_STATES: dict[str, tuple[str, Q | None]] = {
    "to_start": ("To start", None),
    "in_progress": ("In progress (draft)", Q(status=PassDocument.Status.DRAFT)),
    "rejected": ("Rejected by the source reviewer", Q(status=PassDocument.Status.REJECTED)),
    "submitted": ("Submitted, awaiting source review", Q(status=PassDocument.Status.SUBMITTED)),
    "stale": ("Approval stale (changed after approval)", STALE_APPROVAL),
    "approved": ("Passes 1–4 approved", FRESH_APPROVAL),
}


def work_filter(work: str) -> Q:
    """The ``ParentProblem`` condition of a work state (one subquery)."""
    condition = WORK_STATES[work][1]
    passes = PassDocument.objects.filter(parent=OuterRef("pk"), pass_no__in=ANNOTATION_PASSES)
    if condition is None:
        diagram = ProblemImage.objects.filter(parent=OuterRef("pk"))
        return ~Exists(passes) & Exists(diagram) & ~Q(status=ParentProblem.Status.EXCLUDED)
    if work == "approved":  # every one of passes 1–4, freshly approved (what admits a parent to compilation)
        fresh = passes.filter(condition).values("parent").annotate(n=Count("pk")).values("n")
        return Q(Exact(Subquery(fresh), len(ANNOTATION_PASSES)))
    return Q(Exists(passes.filter(condition)))


def work_counts() -> dict[str, int]:
    """Problems per work state, in one query."""
    counts = ParentProblem.objects.aggregate(
        **{key: Count("pk", filter=work_filter(key)) for key in WORK_STATES}
    )
    return {key: counts[key] for key in WORK_STATES}


def next_problem_for_pass(*, after: ParentProblem, pass_no: int) -> ParentProblem | None:
    """The next problem, by id after ``after`` (then from the start), whose Pass ``pass_no`` is still an
    annotator's work: not started, in draft or rejected; a problem with a diagram, not excluded. None for Pass 5
    (it opens per problem once 1–4 are approved) and when no other problem waits."""
    if pass_no not in ANNOTATION_PASSES:
        return None
    done = PassDocument.objects.filter(parent=OuterRef("pk"), pass_no=pass_no).exclude(
        status__in=[PassDocument.Status.DRAFT, PassDocument.Status.REJECTED]
    )
    waiting = (
        ParentProblem.objects.exclude(status=ParentProblem.Status.EXCLUDED)
        .exclude(pk=after.pk)
        .filter(~Exists(done), Exists(ProblemImage.objects.filter(parent=OuterRef("pk"))))
        .only("pk", "problem_id")
        .order_by("problem_id")
    )
    return waiting.filter(problem_id__gt=after.problem_id).first() or waiting.first()


def rejected_passes(*, limit: int = 20) -> QuerySet[PassDocument]:
    """Rejected passes 1–4, newest first, with the reviewer's note (the ``review_note``)."""
    return (
        PassDocument.objects.filter(status=PassDocument.Status.REJECTED, pass_no__in=ANNOTATION_PASSES)
        .select_related("parent", "updated_by")
        .defer("document", "parent__raw_question", "parent__answer", "parent__solution", "parent__meta")
        .order_by("-updated_at")[:limit]
    )


SOURCE_QUEUE_AGES = {"": 0, "1": 1, "3": 3, "7": 7}  # "older than N days" choices of the source review queue


def source_review_queue(
    *, search: str = "", pass_no: int | None = None, older_than_days: int = 0
) -> QuerySet[PassDocument]:
    """Submitted passes 1–4 waiting for a source reviewer, oldest first (the order they should be taken)."""
    qs = PassDocument.objects.filter(
        status=PassDocument.Status.SUBMITTED, pass_no__in=ANNOTATION_PASSES
    ).select_related("parent", "updated_by")
    if search:
        qs = qs.filter(parent__problem_id__icontains=search)
    if pass_no in ANNOTATION_PASSES:
        qs = qs.filter(pass_no=pass_no)
    if older_than_days:
        qs = qs.filter(updated_at__lte=timezone.now() - timedelta(days=older_than_days))
    return qs.defer(
        "document", "parent__raw_question", "parent__answer", "parent__solution", "parent__meta"
    ).order_by("updated_at", "pk")


@dataclass(frozen=True)
class SourceQueueFilters:
    """The source review queue's filters, read from a query string (unknown values are no filter)."""

    QUERY_PARAMS: ClassVar[tuple[str, ...]] = ("q", "pass", "age")
    search: str = ""
    pass_no: int | None = None
    age: str = ""

    @classmethod
    def from_query(cls, query: Any) -> SourceQueueFilters:
        pass_text = query.get("pass", "")
        age = query.get("age", "")
        return cls(
            search=query.get("q", "").strip()[:200],
            pass_no=int(pass_text) if pass_text in {str(n) for n in ANNOTATION_PASSES} else None,
            age=age if age in SOURCE_QUEUE_AGES else "",
        )

    def as_query(self) -> dict[str, str]:
        """The filters as query parameters (only those set), to carry from the queue to a review and back."""
        values = {"q": self.search, "pass": str(self.pass_no or ""), "age": self.age}
        return {key: value for key, value in values.items() if value}

    def queue(self) -> QuerySet[PassDocument]:
        return source_review_queue(
            search=self.search, pass_no=self.pass_no, older_than_days=SOURCE_QUEUE_AGES[self.age]
        )


def source_review_progress(*, filters: SourceQueueFilters) -> dict[str, int]:
    """How far the queue's scope is: passes 1–4 under the filters that reached review (submitted, approved or
    rejected) and how many of them are decided."""
    scope = PassDocument.objects.filter(
        pass_no__in=[filters.pass_no] if filters.pass_no else ANNOTATION_PASSES,
        status__in=[
            PassDocument.Status.SUBMITTED,
            PassDocument.Status.APPROVED,
            PassDocument.Status.REJECTED,
        ],
    )
    if filters.search:
        scope = scope.filter(parent__problem_id__icontains=filters.search)
    counts = scope.aggregate(
        total=Count("pk"), waiting=Count("pk", filter=Q(status=PassDocument.Status.SUBMITTED))
    )
    return {"total": counts["total"], "done": counts["total"] - counts["waiting"]}


def stale_approvals() -> QuerySet[PassDocument]:
    """Approved passes whose document or problem content changed since: they need a fresh review before the
    parent compiles."""
    return (
        PassDocument.objects.filter(STALE_APPROVAL, pass_no__in=ANNOTATION_PASSES)
        .select_related("parent", "approved_by")
        .defer("document", "parent__raw_question", "parent__answer", "parent__solution", "parent__meta")
        # what changed upstream (``approval_upstream_changed``) is read from the parent's passes, in one query
        .prefetch_related(
            Prefetch(
                "parent__passes",
                queryset=PassDocument.objects.only("pk", "parent_id", "pass_no", "updated_at"),
            )
        )
        .order_by("updated_at", "pk")
    )


def parent_get(*, problem_id: str) -> ParentProblem | None:
    return parent_detail_queryset().filter(problem_id=problem_id).first()


def pass_document_get(*, parent: ParentProblem, pass_no: int) -> PassDocument | None:
    return (
        PassDocument.objects.select_related("approved_by", "updated_by", "parent")
        .filter(parent=parent, pass_no=pass_no)
        .first()
    )


def parent_passes_approved(*, parent: ParentProblem) -> bool:
    """True when passes 1–4 all exist and their approvals are fresh (document and problem content unchanged)."""
    fresh = PassDocument.objects.filter(FRESH_APPROVAL, parent=parent, pass_no__in=ANNOTATION_PASSES)
    return fresh.count() == len(ANNOTATION_PASSES)


def pass_validation_issues(
    *, parent: ParentProblem, pass_no: int, document: Any, earlier: dict[int, Any] | None = None
) -> list[dict[str, str]]:
    """Issues of the pure pass validator as ``{code, path, message}`` dicts: the Kit's checks plus the
    workspace's stricter ones (a document made or stored in this app; Kit files are judged by the Kit's alone).

    The validator receives the parent's public context and the stored documents of earlier passes
    (``earlier``, from ``earlier_pass_documents``, when the caller has read them; else one query).
    """
    if earlier is None:
        earlier = earlier_pass_documents(parent=parent, pass_no=pass_no)
    return _validator_issues(parent, pass_no, document, earlier)


def earlier_pass_documents(*, parent: ParentProblem, pass_no: int) -> dict[int, Any]:
    """The stored documents of the passes before ``pass_no``, by pass number (one query): the context the
    validator and the physics checks judge a pass in."""
    return dict(
        PassDocument.objects.filter(parent=parent, pass_no__lt=pass_no).values_list("pass_no", "document")
    )


def _validator_issues(
    parent: ParentProblem, pass_no: int, document: Any, earlier: dict[int, Any]
) -> list[dict[str, str]]:
    images = tuple(
        ImageRef(image_id=img.image_id, width=img.width, height=img.height)
        for img in ProblemImage.objects.filter(parent=parent).order_by("ordinal")
    )
    context = context_for(
        pass_no,
        problem_id=parent.problem_id,
        stem=parent.stem,
        query=parent.query,
        images=images,
        earlier=earlier,
    )
    return checked_workspace_issues(pass_no, document, context)


def pass_issues(*, parent: ParentProblem, pass_no: int, document: Any) -> list[dict[str, Any]]:
    """Every issue the pass API lists for ``document``: the validator's (``pass_validation_issues``; they block
    submit), then the physics checks' findings, each with its ``severity`` ("warning" never blocks; "blocking"
    when an admin made its rule so). The earlier passes are read once for both."""
    earlier = earlier_pass_documents(parent=parent, pass_no=pass_no)
    return [
        *_validator_issues(parent, pass_no, document, earlier),
        *physics_issues(parent=parent, pass_no=pass_no, document=document, earlier=earlier),
    ]


def source_list() -> QuerySet[Source]:
    return Source.objects.order_by("name")


def import_job_get(*, job_id: int) -> ImportJob | None:
    return ImportJob.objects.filter(pk=job_id).first()


# --- workspace: history ------------------------------------------------------------------------------


def pass_version_list(*, doc: PassDocument) -> QuerySet[PassDocumentVersion]:
    """Every saved version, newest first, without the documents (one query, whatever the count)."""
    return (
        PassDocumentVersion.objects.filter(pass_document=doc)
        .select_related("saved_by")
        .defer("document")
        .order_by("-version")
    )


def pass_version_get(*, doc: PassDocument, version: int) -> PassDocumentVersion | None:
    return (
        PassDocumentVersion.objects.select_related("saved_by")
        .filter(pass_document=doc, version=version)
        .first()
    )


def workspace_documents(*, parent: ParentProblem) -> dict[int, PassDocument]:
    """All pass documents of a parent in one query (the workspace needs earlier passes as context)."""
    # Through the parent's manager, so each document knows its parent (freshness reads its content hash).
    return {doc.pass_no: doc for doc in parent.passes.select_related("updated_by", "approved_by")}


# The Kit's own source hashes of an imported Kit workspace problem ------------------------------------------------
KIT_PASSES = (1, 2, 3, 4)


def kit_source_guard(
    *,
    stem: str,
    query: str,
    options: Any,
    language: str,
    source_name: str,
    split: str,
    sample: str,
    images: list[tuple[str, str]],
) -> str:
    """What a Kit manifest row says about a problem, as a digest: its row hash holds only while this is unchanged."""
    return digest(
        {
            "stem": stem,
            "query": query,
            "options": options,
            "language": language,
            "source": source_name,
            "split": split,
            "sample": sample,
            "images": [list(i) for i in images],
        }
    )


def kit_source_record(
    *, row: dict[str, Any], review: dict[str, Any], passes: dict[int, tuple[str, str]], guard: str
) -> dict[str, Any]:
    """Recorded at import: the SHA-256 of the files exactly as the Kit's adapter hashes them — each pass file's
    own bytes, and the manifest row and review entry re-serialized as the Kit writes them (canonical + newline)."""
    return {
        "manifest_sha256": bytes_digest(write_json_bytes(row)),
        "review_sha256": bytes_digest(write_json_bytes(review)),
        "guard": guard,
        "passes": {
            f"pass{n}": {"file_sha256": file_sha, "document_sha256": doc_sha}
            for n, (file_sha, doc_sha) in sorted(passes.items())
        },
    }


def kit_source_hashes(*, parent: ParentProblem, passes: dict[int, PassDocument]) -> dict[str, str]:
    """The Kit's source file hashes that still describe this parent, for the compiler's key (Kit §2.9
    ``source_hashes``, and the file hash in every source record and anchor id).

    A pass file's hash holds while the stored document is the one imported; the manifest and review hashes
    hold while the problem's manifest fields and images are unchanged and all four passes are the imported,
    import-approved documents. Anything else is left to the compiler's own canonical hashes."""
    recorded = parent.kit_source if isinstance(parent.kit_source, dict) else {}
    hashes: dict[str, str] = {}
    for n in KIT_PASSES:
        entry = (recorded.get("passes") or {}).get(f"pass{n}") or {}
        document = passes.get(n)
        if (
            document is not None
            and entry.get("file_sha256")
            and entry.get("document_sha256") == document.document_sha256
        ):
            hashes[f"pass{n}"] = entry["file_sha256"]
    images = [(i.image_id, i.sha256) for i in sorted(parent.images.all(), key=lambda i: i.ordinal)]
    guard = kit_source_guard(
        stem=parent.stem,
        query=parent.query,
        options=parent.options,
        language=parent.language,
        source_name=parent.source.name,
        split=parent.source_split,
        sample=parent.source_sample_id,
        images=images,
    )
    imported = all(
        f"pass{n}" in hashes and passes[n].approval_origin == PassDocument.ApprovalOrigin.IMPORT
        for n in KIT_PASSES
    )
    if imported and recorded.get("guard") == guard:
        hashes["manifest"], hashes["review"] = recorded["manifest_sha256"], recorded["review_sha256"]
    return hashes
