"""Double annotation (issue 31 §2): an admin asks for a second, independent annotation of a seeded sample of a
source's parents; each sampled parent gets one second annotator, spread evenly over the annotators chosen, never
one who worked on the parent's first annotation (nor an admin, who sees everything). The second annotator's
documents are saved and submitted here, validated like the first's against their own earlier passes; they never
compile (curation may carry their records over)."""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from physalign_site.roles import ANNOTATOR, is_admin, user_roles

from ..models import (
    Assignment,
    DoubleAnnotationSample,
    IndependentPassDocument,
    ParentProblem,
    PassDocument,
    PassDocumentVersion,
    SecondAnnotation,
    Source,
)
from ..selectors import _validator_issues
from ..services import _hard_refusals, _merge_issues, _own_forbidden, _require_expected_version
from .blind import forget_hidden

INDEPENDENT_PASSES = (
    1,
    2,
    3,
)  # the answer-blind passes whose records agreement compares (Pass 4 consolidates them)


def first_annotators(parent_ids: list[int]) -> dict[int, set[int]]:
    """Who worked on each parent's first annotation: its assigned annotator and everyone who saved a version of
    one of its passes (two queries)."""
    found: dict[int, set[int]] = {pk: set() for pk in parent_ids}
    for parent_id, user_id in (
        PassDocumentVersion.objects.filter(pass_document__parent_id__in=parent_ids, saved_by__isnull=False)
        .values_list("pass_document__parent_id", "saved_by_id")
        .order_by()
        .distinct()
    ):
        found[parent_id].add(user_id)
    for parent_id, user_id in PassDocument.objects.filter(
        parent_id__in=parent_ids, updated_by__isnull=False
    ).values_list("parent_id", "updated_by_id"):
        found[parent_id].add(user_id)
    for parent_id, user_id in Assignment.objects.filter(
        parent_id__in=parent_ids, role=Assignment.Role.ANNOTATOR
    ).values_list("parent_id", "user_id"):
        found[parent_id].add(user_id)
    return found


def _eligible_annotators(annotator_ids: list[int]) -> list[Any]:
    users = list(get_user_model().objects.filter(pk__in=annotator_ids, is_active=True).order_by("username"))
    missing = set(annotator_ids) - {u.pk for u in users}
    if missing:
        raise ApplicationError(
            "Unknown or inactive annotator.", code="annotator_unknown", extra={"ids": sorted(missing)}
        )
    for user in users:
        if is_admin(user):
            raise ApplicationError(
                f"{user.get_username()} is an admin: admins see every annotation, so they cannot annotate blind.",
                code="second_annotator_admin",
            )
        if ANNOTATOR not in user_roles(user):
            raise ApplicationError(
                f"{user.get_username()} does not hold the annotator role.",
                code="second_annotator_not_annotator",
            )
    return users


def sample_parents(
    candidates: list[str], *, fraction: float | None, count: int | None, seed: int
) -> list[str]:
    """The seeded sample: ``count`` problem ids (or ``ceil``-free ``round(fraction × n)``, at least one) drawn with
    ``random.Random(seed)`` from the candidates in problem_id order, returned in problem_id order."""
    ordered = sorted(candidates)
    wanted = count if count is not None else max(1, round((fraction or 0) * len(ordered)))
    wanted = min(wanted, len(ordered))
    return sorted(random.Random(seed).sample(ordered, wanted))


def _require_sample_size(fraction: float | None, count: int | None) -> None:
    if (fraction is None) == (count is None):
        raise ApplicationError("Give either a fraction or a count of parents.", code="sample_size_invalid")
    if fraction is not None and not 0 < fraction <= 1:
        raise ApplicationError("The fraction must be in (0, 1].", code="sample_size_invalid")
    if count is not None and count < 1:
        raise ApplicationError("The count must be at least 1.", code="sample_size_invalid")


@transaction.atomic
def double_sample_request(
    *,
    source: Source,
    annotator_ids: list[int],
    actor: Any,
    fraction: float | None = None,
    count: int | None = None,
    seed: int = 2027,
    among: list[int] | None = None,
) -> DoubleAnnotationSample:
    """Draw the sample among the source's parents not yet double-annotated and give each a second annotator,
    round robin over the chosen annotators in problem_id order, skipping any who worked on that parent's first
    annotation. Refused as a whole (nothing stored) when a parent has no eligible annotator. ``among`` limits the
    candidates to those parent ids (e.g. the parents whose first annotation is approved)."""
    _require_sample_size(fraction, count)
    if not annotator_ids:
        raise ApplicationError("Choose at least one second annotator.", code="annotator_required")
    annotators = _eligible_annotators(annotator_ids)
    pool = ParentProblem.objects.filter(source=source, second_annotation__isnull=True).exclude(
        status=ParentProblem.Status.EXCLUDED
    )
    if among is not None:
        pool = pool.filter(pk__in=among)
    candidates = dict(pool.values_list("problem_id", "pk"))
    if not candidates:
        raise ApplicationError(
            f"Source {source.name} has no parent left to double-annotate.", code="sample_empty", status=409
        )
    chosen = sample_parents(list(candidates), fraction=fraction, count=count, seed=seed)
    worked = first_annotators([candidates[pid] for pid in chosen])
    sample = DoubleAnnotationSample.objects.create(
        source=source, fraction=fraction, count=count, seed=seed, created_by=actor
    )
    turn = 0
    rows = []
    for problem_id in chosen:
        parent_pk = candidates[problem_id]
        for step in range(len(annotators)):
            user = annotators[(turn + step) % len(annotators)]
            if user.pk not in worked[parent_pk]:
                turn = (turn + step + 1) % len(annotators)
                break
        else:
            raise ApplicationError(
                f"Every chosen annotator worked on the first annotation of {problem_id}: choose another.",
                code="no_independent_annotator",
                extra={"problem_id": problem_id},
            )
        rows.append(SecondAnnotation(sample=sample, parent_id=parent_pk, annotator=user))
    SecondAnnotation.objects.bulk_create(rows)
    event_record(
        actor=actor,
        verb="double_annotation.sample",
        obj=sample,
        after={
            "source": source.name,
            "fraction": fraction,
            "count": count,
            "seed": seed,
            "parents": {pid: row.annotator.get_username() for pid, row in zip(chosen, rows, strict=True)},
        },
    )
    for user in annotators:
        forget_hidden(user)
    return sample


def second_for(*, problem_id: str, user: Any) -> SecondAnnotation:
    """The second annotation of ``problem_id`` that ``user`` may work on (its annotator; admins read any)."""
    second = (
        SecondAnnotation.objects.select_related("parent", "annotator", "sample")
        .filter(parent__problem_id=problem_id)
        .first()
    )
    if second is None:
        raise ApplicationError(
            "This problem is not double-annotated.", code="not_double_annotated", status=404
        )
    if second.annotator_id != getattr(user, "pk", None) and not is_admin(user):
        raise ApplicationError(
            "Only the problem's second annotator (and admins) may open its independent annotation.",
            code="not_second_annotator",
            status=403,
        )
    return second


def own_earlier(second: SecondAnnotation, pass_no: int) -> dict[int, Any]:
    return dict(second.documents.filter(pass_no__lt=pass_no).values_list("pass_no", "document"))


def independent_issues(second: SecondAnnotation, pass_no: int, document: Any) -> list[dict[str, str]]:
    """The validator's issues for the second annotator's document, judged against their own earlier passes."""
    return _merge_issues(
        _validator_issues(second.parent, pass_no, document, own_earlier(second, pass_no)),
        _own_forbidden(pass_no, document),
    )


def _require_independent_pass(pass_no: int) -> None:
    if pass_no not in INDEPENDENT_PASSES:
        raise ApplicationError(
            "The independent annotation covers Passes 1–3.", code="pass_not_independent", status=404
        )


def _require_own(second: SecondAnnotation, actor: Any) -> None:
    if second.annotator_id != getattr(actor, "pk", None):
        raise ApplicationError(
            "Only the second annotator edits their independent annotation.",
            code="not_second_annotator",
            status=403,
        )


@transaction.atomic
def independent_save(
    *, second: SecondAnnotation, pass_no: int, document: Any, actor: Any, expected_version: int | None
) -> IndependentPassDocument:
    """Create or replace the second annotator's document of one pass, guarded by If-Match like the first's
    (a stale version is a 409 and nothing changes; an unchanged document is a no-op). Drafts with issues are
    stored; the issues block submit."""
    _require_independent_pass(pass_no)
    _require_own(second, actor)
    SecondAnnotation.objects.select_for_update().filter(pk=second.pk).first()
    doc = IndependentPassDocument.objects.select_for_update().filter(second=second, pass_no=pass_no).first()
    _require_expected_version(doc, expected_version)  # type: ignore[arg-type]
    if isinstance(document, dict):
        issues = _validator_issues(second.parent, pass_no, document, own_earlier(second, pass_no))
    else:
        issues = []
    refusals = _hard_refusals(second.parent, pass_no, document, issues)
    if refusals:
        raise ApplicationError(
            "The document cannot be stored.", code="document_invalid", extra={"errors": refusals}
        )
    sha = digest(document)
    if doc is not None and doc.document_sha256 == sha:
        return doc
    if doc is None:
        doc = IndependentPassDocument.objects.create(
            second=second, pass_no=pass_no, document=document, document_sha256=sha, updated_by=actor
        )
    else:
        doc.document, doc.document_sha256 = document, sha
        doc.version += 1
        doc.status = IndependentPassDocument.Status.DRAFT
        doc.updated_by = actor
        doc.save(
            update_fields=["document", "document_sha256", "version", "status", "updated_by", "updated_at"]
        )
    event_record(
        actor=actor,
        verb="independent_pass.save",
        obj=doc,
        after={
            "problem_id": second.parent.problem_id,
            "pass_no": pass_no,
            "version": doc.version,
            "sha256": sha,
        },
    )
    return doc


@transaction.atomic
def independent_submit(*, second: SecondAnnotation, pass_no: int, actor: Any) -> IndependentPassDocument:
    """Draft → submitted, only when the validator reports no issue (as the first annotator's submit)."""
    _require_independent_pass(pass_no)
    _require_own(second, actor)
    doc = IndependentPassDocument.objects.select_for_update().filter(second=second, pass_no=pass_no).first()
    if doc is None:
        raise ApplicationError("Save this pass before submitting it.", code="pass_not_found", status=404)
    if doc.status == IndependentPassDocument.Status.SUBMITTED:
        return doc
    issues = independent_issues(second, pass_no, doc.document)
    if issues:
        raise ApplicationError(
            "Fix the validator's issues before submitting.", code="document_invalid", extra={"errors": issues}
        )
    doc.status = IndependentPassDocument.Status.SUBMITTED
    doc.save(update_fields=["status", "updated_at"])
    event_record(
        actor=actor,
        verb="independent_pass.submit",
        obj=doc,
        after={"problem_id": second.parent.problem_id, "pass_no": pass_no, "version": doc.version},
    )
    return doc
