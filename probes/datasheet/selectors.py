"""The rows a datasheet is computed from (``probes.datasheet.figures``), read from a release or from the files an
export is about to write, so that the folder's ``datasheet.json`` and the release page show the same figures.

Where each count comes from:

- the localized probes (G) are the release's items (``ReleaseItem``, the public raw records: pool B); an item's
  split is its membership's ``split`` (the request's split, development or test), its pairing is its membership's
  ``P`` (an approved non-empty +GT packet: the probe has a gold record, ``private/pools.json``'s P);
- a parent is a ``problem_id`` of those items; its source, domain and public text (statement, question, options)
  are the database's ``ParentProblem`` (an imported release whose parents are not here falls back to the
  membership's ``source_namespace`` and is left Unclassified);
- the packaged image files are the files under ``public/images/`` of the release folder
  (``release_store.release_listing``, which also reads the media bucket's index);
- double annotation is ``annotation.SecondAnnotation`` of those parents, its agreement figures
  ``annotation.agreement``'s, pooled over the release's parents.

Every read is a fixed number of queries, whatever the number of items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q

from annotation.models import IndependentPassDocument, ParentProblem, SecondAnnotation
from kit.canonical import parse_json

from ..models import Release
from ..release_store import release_listing
from .figures import (
    AgreementInput,
    Datasheet,
    DatasheetInput,
    ParentRow,
    ProbeRow,
    agreement_statistics,
    build_datasheet,
)

IMAGES_PREFIX = "public/images/"


def problem_text(parent: Any) -> str:
    """The public text of a parent problem that the content profile reads: its statement, question and options
    (the raw question when both are empty); never its answer or solution."""
    options = " ".join(str(o.get("text", "")) for o in (parent.options or []) if isinstance(o, dict))
    text = " ".join(part for part in (parent.stem, parent.query, options) if part)
    return text or (parent.raw_question or "")


def parent_rows(
    problem_ids: Iterable[str], namespaces: dict[str, str] | None = None
) -> tuple[ParentRow, ...]:
    """The parents of ``problem_ids`` as rows (one query); a parent not in the database gets its membership's
    source namespace, no domain and no text."""
    ids = sorted(set(problem_ids))
    found = {
        parent.problem_id: ParentRow(
            parent.problem_id, parent.source.name, parent.domain, problem_text(parent)
        )
        for parent in ParentProblem.objects.filter(problem_id__in=ids)
        .select_related("source")
        .only("problem_id", "domain", "stem", "query", "options", "raw_question", "source__name")
    }
    namespaces = namespaces or {}
    return tuple(found.get(pid) or ParentRow(pid, namespaces.get(pid, ""), "") for pid in ids)


def agreement_input(problem_ids: Iterable[str]) -> AgreementInput | None:
    """Double annotation of these parents, or None when none is: one query when none is, five in all when some
    are (the two counts, then ``annotation.agreement``'s three)."""
    ids = sorted(set(problem_ids))
    seconds = SecondAnnotation.objects.filter(parent__problem_id__in=ids)
    double = seconds.count()
    if not double:
        return None
    submitted = seconds.filter(documents__status=IndependentPassDocument.Status.SUBMITTED).distinct().count()
    return AgreementInput(double, submitted, agreement_figures(ids))


def agreement_figures(problem_ids: list[str]) -> tuple[tuple[str, str, str], ...]:
    """The agreement of these parents' two annotations, pass by pass (``annotation.agreement``: every
    double-annotated parent compared, then pooled over the release's with ``core.combine``), as the datasheet's
    rows. Imported here, not at the top: the agreement core loads scipy, which a page without double
    annotation never needs."""
    from annotation.agreement.core import combine
    from annotation.agreement.selectors import agreement_parents

    by_pass: dict[int, list[dict[str, Any]]] = {}
    for row in agreement_parents(problem_ids=set(problem_ids)):
        by_pass.setdefault(row.pass_no, []).append(row.figures)
    return agreement_statistics([combine(figures) for _, figures in sorted(by_pass.items())])


def _membership_rows(release: Release) -> tuple[tuple[ProbeRow, ...], dict[str, str]]:
    probes = []
    namespaces: dict[str, str] = {}
    rows = (
        release.items.annotate(
            has_gold=ExpressionWrapper(Q(public_gold__isnull=False), output_field=BooleanField())
        )
        .values_list(
            "problem_id",
            "membership__problem_id",
            "membership__split",
            "membership__P",
            "has_gold",
            "membership__metadata__source_namespace",
        )
        .order_by()
    )
    for problem_id, member_problem, split, in_p, has_gold, namespace in rows:
        pid = problem_id or member_problem or ""
        probes.append(
            ProbeRow(pid, split or release.split, in_p if isinstance(in_p, bool) else bool(has_gold))
        )
        if namespace:
            namespaces.setdefault(pid, str(namespace))
    return tuple(probes), namespaces


def image_file_count(names: Iterable[str]) -> int:
    return sum(1 for name in names if name.startswith(IMAGES_PREFIX))


def datasheet_input_for_release(release: Release) -> DatasheetInput:
    probes, namespaces = _membership_rows(release)
    ids = {p.problem_id for p in probes}
    listing = release_listing(release)
    return DatasheetInput(
        release_id=release.release_id,
        split=release.split,
        parents=parent_rows(ids, namespaces),
        probes=probes,
        image_files=image_file_count(name for name, _ in listing) if listing else None,
        agreement=agreement_input(ids),
    )


def datasheet_for_release(release: Release) -> Datasheet:
    """The datasheet of a release as it is now (the page, the CSV, the command, the dataset card)."""
    return build_datasheet(datasheet_input_for_release(release))


def datasheet_for_export(*, tree: dict[str, bytes], manifest: dict[str, Any]) -> Datasheet:
    """The datasheet of a release an export is about to write, from its files (``private/membership.json``, the
    ``public/images/`` it holds) and the database's parents: the figures the release page will show."""
    members = parse_json(tree["private/membership.json"])
    probes = tuple(
        ProbeRow(str(m["problem_id"]), str(m.get("split") or manifest["split"]), bool(m.get("P")))
        for m in members
    )
    ids = {p.problem_id for p in probes}
    namespaces = {
        str(m["problem_id"]): str(m.get("metadata", {}).get("source_namespace", ""))
        for m in members
        if m.get("metadata", {}).get("source_namespace")
    }
    return build_datasheet(
        DatasheetInput(
            release_id=manifest["release_id"],
            split=manifest["split"],
            parents=parent_rows(ids, namespaces),
            probes=probes,
            image_files=image_file_count(tree),
            agreement=agreement_input(ids),
        )
    )
