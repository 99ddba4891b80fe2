"""Reads for the physics checks: the findings of a stored (or about-to-be-saved) pass document, judged against
the parent's stored earlier passes and its question and stem (the pure checker is ``annotation.physics.checks``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import QuerySet

from annotation.models import ParentProblem, PassDocument
from annotation.physics.checks import Finding, RuleSet, check_document

CHECKED_PASSES = (1, 2, 3, 4)


def document_physics_findings(
    *, parent: ParentProblem, pass_no: int, document: object, rules: RuleSet | None = None
) -> list[Finding]:
    """The findings of ``document`` as the parent's Pass ``pass_no`` document, with the stored documents of the
    passes before it as context (one query)."""
    earlier = dict(
        PassDocument.objects.filter(parent=parent, pass_no__lt=pass_no).values_list("pass_no", "document")
    )
    return check_document(
        pass_no,
        document if isinstance(document, dict) else {},
        earlier=earlier,
        question=parent.query,
        stem=parent.stem,
        rules=rules,
    )


def parent_physics_findings(
    *, parent: ParentProblem, rules: RuleSet | None = None
) -> dict[int, list[Finding]]:
    """The findings of each stored pass 1–4 of ``parent``, by pass number (passes not stored are left out; one
    query for all of them)."""
    stored = dict(
        PassDocument.objects.filter(parent=parent, pass_no__in=CHECKED_PASSES).values_list(
            "pass_no", "document"
        )
    )
    return _findings_of(stored, question=parent.query, stem=parent.stem, rules=rules)


@dataclass(frozen=True)
class ParentFindings:
    problem_id: str
    findings: dict[int, list[Finding]]  # by pass number, every stored pass 1–4 (an empty list: none)


def physics_findings_of_parents(
    *, parents: QuerySet[ParentProblem], rules: RuleSet | None = None, chunk: int = 200
) -> Iterator[ParentFindings]:
    """The findings of every stored pass 1–4 of each parent, in problem-id order: two queries per ``chunk``
    parents, so a command over every problem does not grow in queries per problem."""
    rows = list(parents.order_by("problem_id").values_list("pk", "problem_id", "query", "stem"))
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        documents: dict[int, dict[int, object]] = {pk: {} for pk, *_ in part}
        stored = PassDocument.objects.filter(parent_id__in=documents, pass_no__in=CHECKED_PASSES).values_list(
            "parent_id", "pass_no", "document"
        )
        for parent_id, pass_no, document in stored:
            documents[parent_id][pass_no] = document
        for pk, problem_id, query, stem in part:
            yield ParentFindings(
                problem_id, _findings_of(documents[pk], question=query, stem=stem, rules=rules)
            )


def _findings_of(
    stored: dict[int, object], *, question: str, stem: str, rules: RuleSet | None
) -> dict[int, list[Finding]]:
    return {
        pass_no: check_document(
            pass_no,
            document if isinstance(document, dict) else {},
            earlier=_earlier(stored, pass_no),
            question=question,
            stem=stem,
            rules=rules,
        )
        for pass_no, document in sorted(stored.items())
    }


def _earlier(stored: dict[int, object], pass_no: int) -> dict[int, dict]:
    return {n: doc for n, doc in stored.items() if n < pass_no and isinstance(doc, dict)}
