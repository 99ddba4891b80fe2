"""The curation page: both annotations of a pass side by side on the diagram, a table of their matched records with
one choice each, and the page of an applied curation (what was saved, and whether it went to source review)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from ..models import Curation, ParentProblem, PassDocument, SecondAnnotation
from ..selectors import pass_issues
from ..workspace import PASS_TITLES
from .merge import KEEPS, Choice
from .permissions import can_curate, curation_refusal
from .selectors import (
    CurationRow,
    curation_list,
    curation_parent,
    curation_rows,
    curation_sides,
    record_label,
    region_nodes,
)
from .services import curation_apply

KEEP_LABELS = {"first": "Keep first", "second": "Take second", "drop": "Drop"}
ADD_LABEL = "Add"
MAX_ROWS = 5000  # the API takes as many choices


def _images(parent: ParentProblem) -> list[dict[str, Any]]:
    return [
        {
            "image_id": image.image_id,
            "url": reverse("annotation:image_file", args=[parent.problem_id, image.image_id]),
            "width": image.width,
            "height": image.height,
        }
        for image in parent.images.all()
    ]


def posted_choices(data: QueryDict) -> list[Choice]:
    """The table's choices as posted: for row i, ``collection-i``, ``first-i``, ``second-i`` (the pair, "" for
    none) and ``keep-i``; a row without ``keep-i`` takes its default."""
    count = int_param(data.get("rows"), name="rows") or 0
    if count > MAX_ROWS:
        raise ApplicationError(
            f"rows must be at most {MAX_ROWS}.", code="invalid_parameter", extra={"parameter": "rows"}
        )
    choices = []
    for i in range(count):
        keep = data.get(f"keep-{i}")
        if not keep:
            continue
        if keep not in KEEPS:
            raise ApplicationError(f"Row {i + 1}: {keep!r} is not a choice.", code="choice_invalid")
        choices.append(
            Choice(
                collection=data.get(f"collection-{i}", ""),
                first_id=data.get(f"first-{i}") or None,
                second_id=data.get(f"second-{i}") or None,
                keep=keep,
            )
        )
    return choices


def _options(row: CurationRow) -> list[dict[str, str]]:
    return [
        {
            "value": keep,
            "label": ADD_LABEL if keep == "second" and row.kind == "second_only" else KEEP_LABELS[keep],
        }
        for keep in row.allowed
    ]


@require_http_methods(["GET", "POST"])
@require(can_curate)
def curate(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    """GET: both annotations and the pairs; POST: apply the choices (then the curation's own page)."""
    parent = curation_parent(problem_id=problem_id)
    error, status = "", 200
    if request.method == "POST":
        try:
            outcome = curation_apply(
                parent=parent,
                pass_no=pass_no,
                choices=posted_choices(request.POST),
                curator=request.user,
                expected_version=int_param(request.POST.get("expected_version"), name="expected_version"),
                second_version=int_param(request.POST.get("second_version"), name="second_version"),
            )
        except ApplicationError as exc:
            if exc.status_code in (403, 404):
                raise
            error, status = exc.message, exc.status_code
        else:
            if outcome.submitted:
                messages.success(
                    request,
                    f"Curated: saved as version {outcome.doc.version} and submitted for source review.",
                )
            else:
                messages.warning(
                    request,
                    f"Curated: saved as version {outcome.doc.version}, left a draft: the validator reports "
                    f"{len(outcome.issues)} issue{'s' if len(outcome.issues) != 1 else ''}.",
                )
            return redirect(
                "curation:result",
                problem_id=parent.problem_id,
                pass_no=pass_no,
                curation_id=outcome.curation.pk,
            )
    sides = curation_sides(user=request.user, parent=parent, pass_no=pass_no)
    rows = curation_rows(sides)
    posted = {f"{i}": request.POST.get(f"keep-{i}") for i in range(len(rows))} if error else {}
    table = [
        {
            "row": row,
            "options": _options(row),
            "chosen": posted.get(str(row.index)) or row.default,
        }
        for row in rows
    ]
    payload = {
        "images": _images(parent),
        "sides": {
            "first": region_nodes(pass_no, sides.first.document, sides.first_earlier),
            "second": region_nodes(pass_no, sides.second.document, sides.second_earlier),
        },
        "rows": [
            {"index": r.index, "first": list(r.first_regions), "second": list(r.second_regions)} for r in rows
        ],
    }
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "sides": sides,
        "first": sides.first,
        "second": sides.second,
        "second_annotator": sides.second_annotation.annotator,
        "table": table,
        "counts": {
            "matched": sum(1 for r in rows if r.kind == "matched"),
            "differ": sum(1 for r in rows if r.differs),
            "first_only": sum(1 for r in rows if r.kind == "first_only"),
            "second_only": sum(1 for r in rows if r.kind == "second_only"),
        },
        "payload": payload,
        "curations": curation_list(parent=parent, pass_no=pass_no)[:10],
        "error": error,
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/curation.html", context, status=status)


@require_GET
@require(can_curate)
def result(request: HttpRequest, problem_id: str, pass_no: int, curation_id: int) -> HttpResponse:
    """One applied curation: its choices, the curated version as it is now and what the source review will see."""
    parent = curation_parent(problem_id=problem_id)
    curation = (
        Curation.objects.select_related("curator")
        .filter(pk=curation_id, parent=parent, pass_no=pass_no)
        .first()
    )
    if curation is None:
        raise ApplicationError("There is no such curation of this pass.", code="not_found", status=404)
    second = SecondAnnotation.objects.filter(parent=parent).values_list("annotator_id", flat=True).first()
    refusal = curation_refusal(request.user, second_annotator_id=second, last_editor_id=None)
    if refusal:
        raise ApplicationError(refusal, code="curation_forbidden", status=403)
    doc = PassDocument.objects.select_related("updated_by").filter(parent=parent, pass_no=pass_no).first()
    current = doc is not None and doc.document_sha256 == curation.result_sha256
    earlier = dict(
        PassDocument.objects.filter(parent=parent, pass_no__lt=pass_no).values_list("pass_no", "document")
    )
    document = doc.document if doc is not None else {}
    issues = (
        [
            i
            for i in pass_issues(parent=parent, pass_no=pass_no, document=document)
            if i.get("severity") != "warning"
        ]
        if doc is not None and doc.status == PassDocument.Status.DRAFT and current
        else []
    )
    choices = [
        {
            **choice,
            "label": KEEP_LABELS.get(choice.get("keep", ""), choice.get("keep", "")),
            "changed": choice.get("keep") != ("first" if choice.get("first_id") else "drop"),
        }
        for choice in curation.choices
        if isinstance(choice, dict)
    ]
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "curation": curation,
        "doc": doc,
        "current": current,
        "issues": issues,
        "choices": choices,
        "changed_count": sum(1 for c in choices if c["changed"]),
        "records": [
            {"collection": key, "id": r.get("id"), "label": record_label(key, r)}
            for key, rows in document.items()
            if isinstance(rows, list)
            for r in rows
            if isinstance(r, dict) and key != "ambiguities"
        ],
        "payload": {
            "images": _images(parent),
            "sides": {"curated": region_nodes(pass_no, document, earlier)},
            "rows": [],
        },
        "nav_section": "problems",
    }
    return TemplateResponse(request, "annotation/curation.html", context)
