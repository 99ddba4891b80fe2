"""Reads of annotation agreement: every double-annotated parent compared pass by pass, and the figures pooled per
pair of annotators (first, second) and pass.

A parent counts for a pass when both annotations have a document of that pass: the first annotator's
``PassDocument`` (its "first annotator" is the document's last saver, ``updated_by``) and the second
annotator's ``IndependentPassDocument`` (draft or submitted; the tables say how many are submitted). Each side's
later passes are compared through its own earlier passes (``annotation.agreement.core``). Four queries,
whatever the number of parents.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..models import DoubleAnnotationSample, IndependentPassDocument, PassDocument, SecondAnnotation
from .core import DEFAULT_THRESHOLD, combine, pass_agreement

PASSES = (1, 2, 3)  # the independent passes (Pass 4 consolidates them)
UNKNOWN = "(unknown)"


@dataclass(frozen=True)
class Person:
    id: int  # 0: not known (a first document nobody saved through the app, e.g. an import)
    name: str


@dataclass(frozen=True)
class ParentAgreement:
    problem_id: str
    source: str
    sample_id: int
    pass_no: int
    first: Person
    second: Person
    second_status: str
    figures: dict[str, Any]

    @property
    def curation_url(self) -> str:
        return f"/problems/{self.problem_id}/passes/{self.pass_no}/curate/"


@dataclass(frozen=True)
class PairAgreement:
    first: Person
    second: Person
    pass_no: int
    parents: int
    submitted: int
    figures: dict[str, Any]  # ``core.combine`` of the parents' figures

    @property
    def slug(self) -> str:
        return f"{self.first.id}-{self.second.id}"


@dataclass(frozen=True)
class AgreementSummary:
    threshold: float
    sample_id: int | None
    parents: list[ParentAgreement]
    pairs: list[PairAgreement]

    def pairs_of(self, pass_no: int) -> list[PairAgreement]:
        return [p for p in self.pairs if p.pass_no == pass_no]

    def parents_of(self, first_id: int, second_id: int, pass_no: int) -> list[ParentAgreement]:
        return [
            p
            for p in self.parents
            if p.pass_no == pass_no and p.first.id == first_id and p.second.id == second_id
        ]

    def pair(self, first_id: int, second_id: int, pass_no: int) -> PairAgreement | None:
        return next(
            (p for p in self.pairs if (p.first.id, p.second.id, p.pass_no) == (first_id, second_id, pass_no)),
            None,
        )


def _person(user: Any) -> Person:
    return Person(user.pk, user.get_username()) if user is not None else Person(0, UNKNOWN)


def sample_choices() -> list[tuple[int, str]]:
    """Every double-annotation sample, newest first: (id, "#id source (n parents)"). One query."""
    rows = DoubleAnnotationSample.objects.select_related("source").order_by("-created_at", "-id")
    return [(s.pk, f"#{s.pk} {s.source.name}, seed {s.seed}") for s in rows]


def agreement_parents(
    *,
    sample_id: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    problem_ids: Collection[str] | None = None,
) -> list[ParentAgreement]:
    """Every double-annotated parent (of ``sample_id``, or of every sample; only ``problem_ids`` when given)
    compared pass by pass, in problem_id then pass order. Three queries."""
    seconds_qs = SecondAnnotation.objects.select_related("parent__source", "annotator").order_by(
        "parent__problem_id"
    )
    if sample_id is not None:
        seconds_qs = seconds_qs.filter(sample_id=sample_id)
    if problem_ids is not None:
        seconds_qs = seconds_qs.filter(parent__problem_id__in=list(problem_ids))
    seconds = list(seconds_qs)
    if not seconds:
        return []
    independent: dict[int, dict[int, IndependentPassDocument]] = {}
    for own in IndependentPassDocument.objects.filter(second__in=seconds, pass_no__in=PASSES).only(
        "second", "pass_no", "document", "status"
    ):
        independent.setdefault(own.second_id, {})[own.pass_no] = own
    firsts: dict[int, dict[int, PassDocument]] = {}
    for doc in PassDocument.objects.filter(
        parent_id__in=[s.parent_id for s in seconds], pass_no__in=PASSES
    ).select_related("updated_by"):
        firsts.setdefault(doc.parent_id, {})[doc.pass_no] = doc
    out: list[ParentAgreement] = []
    for second in seconds:
        mine, theirs = firsts.get(second.parent_id, {}), independent.get(second.pk, {})
        for pass_no in PASSES:
            if pass_no not in mine or pass_no not in theirs:
                continue
            figures = pass_agreement(
                pass_no,
                mine[pass_no].document,
                theirs[pass_no].document,
                threshold=threshold,
                first_earlier={n: d.document for n, d in mine.items() if n < pass_no},
                second_earlier={n: d.document for n, d in theirs.items() if n < pass_no},
            )
            out.append(
                ParentAgreement(
                    problem_id=second.parent.problem_id,
                    source=second.parent.source.name,
                    sample_id=second.sample_id,
                    pass_no=pass_no,
                    first=_person(mine[pass_no].updated_by),
                    second=_person(second.annotator),
                    second_status=theirs[pass_no].status,
                    figures=figures,
                )
            )
    return out


def agreement_summary(
    *, sample_id: int | None = None, threshold: float = DEFAULT_THRESHOLD
) -> AgreementSummary:
    """The compared parents and their figures pooled per (first annotator, second annotator, pass), ordered by
    the names then the pass."""
    parents = agreement_parents(sample_id=sample_id, threshold=threshold)
    groups: dict[tuple[Person, Person, int], list[ParentAgreement]] = {}
    for row in parents:
        groups.setdefault((row.first, row.second, row.pass_no), []).append(row)
    pairs = [
        PairAgreement(
            first=first,
            second=second,
            pass_no=pass_no,
            parents=len(rows),
            submitted=sum(1 for r in rows if r.second_status == IndependentPassDocument.Status.SUBMITTED),
            figures=combine([r.figures for r in rows]),
        )
        for (first, second, pass_no), rows in sorted(
            groups.items(), key=lambda item: (item[0][0].name, item[0][1].name, item[0][2])
        )
    ]
    return AgreementSummary(threshold=threshold, sample_id=sample_id, parents=parents, pairs=pairs)
