"""Pages of double annotation: the admins' samples, the second annotator's work list, and their own workspace
of a problem (the ordinary workspace, fed their own documents and saving through ``annotation.double.api``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_GET, require_http_methods

from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.roles import is_admin

from ..views.passes import WORKSPACE_CSP, _workspace_parent
from ..workspace import PASS_TITLES
from ..workspace_page import workspace_payload
from .forms import SampleForm
from .permissions import can_annotate_independently, can_manage_double_annotation
from .selectors import sample_rows, work_rows
from .services import INDEPENDENT_PASSES, double_sample_request, second_for


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_double_annotation)
def samples(request: HttpRequest) -> HttpResponse:
    form = SampleForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                sample = double_sample_request(
                    source=form.cleaned_data["source"],
                    annotator_ids=[u.pk for u in form.cleaned_data["annotators"]],
                    actor=request.user,
                    seed=form.cleaned_data["seed"],
                    **form.cleaned_data["size"],
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.success(
                    request, f"Sample #{sample.pk}: {sample.parents.count()} parents get a second annotator."
                )
                return redirect("double:samples")
        status = 400
    context = {"form": form, "samples": sample_rows(), "work": work_rows(request.user, everyone=True)}
    return TemplateResponse(
        request, "annotation/double_samples.html", {**context, "nav_section": "double"}, status=status
    )


@login_required
@require_GET
@require(can_annotate_independently)
def my_work(request: HttpRequest) -> HttpResponse:
    rows = work_rows(request.user, everyone=is_admin(request.user))
    return TemplateResponse(
        request, "annotation/double_work.html", {"rows": rows, "nav_section": "double_work"}
    )


def _tabs(states: dict[int, str]) -> list[dict[str, object]]:
    return [
        {"no": n, "title": PASS_TITLES[n], "state": states.get(n, "missing"), "label": "", "locked": False}
        for n in INDEPENDENT_PASSES
    ]


@login_required
@require_GET
@require(can_annotate_independently)
def problem(request: HttpRequest, problem_id: str) -> HttpResponse:
    second = second_for(problem_id=problem_id, user=request.user)
    return redirect("double:workspace", problem_id=second.parent.problem_id, pass_no=1)


@csp_override(WORKSPACE_CSP)
@login_required
@require_GET
@require(can_annotate_independently)
def workspace(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    """The second annotator's workspace: the same page and tools, their own documents only (no history, no
    drafts, no OCR, no review: all of those belong to the first annotation)."""
    second = second_for(problem_id=problem_id, user=request.user)
    if pass_no not in INDEPENDENT_PASSES:
        raise ApplicationError(
            "The independent annotation covers Passes 1–3.", code="pass_not_independent", status=404
        )
    parent = _workspace_parent(problem_id)
    docs = {doc.pass_no: doc for doc in second.documents.select_related("updated_by")}
    payload = workspace_payload(
        parent=parent,
        images=list(parent.images.all()),
        docs=docs,  # type: ignore[arg-type]  # duck-typed: the fields the page reads
        pass_no=pass_no,
        editable=second.annotator_id == request.user.pk,
        image_url=lambda image: reverse("annotation:image_file", args=[parent.problem_id, image.image_id]),
        solution=None,
        user=request.user,
    )
    args = [parent.problem_id, pass_no]
    payload["urls"] = {
        "api": reverse("double-api:pass", args=args),
        "submit": reverse("double-api:pass-submit", args=args),
        "next_problem": "",
    }
    payload["record_comments"] = {}
    payload["submit_label"] = "Mark done"
    payload["submitted_text"] = "Marked done."
    context = {
        "problem": parent,
        "pass_no": pass_no,
        "pass_title": PASS_TITLES[pass_no],
        "passes": _tabs({n: doc.status for n, doc in docs.items()}),
        "tab_url": "double:workspace",
        "payload": payload,
        "doc": docs.get(pass_no),
        "independent": second,
        "next_pass": pass_no + 1 if pass_no < INDEPENDENT_PASSES[-1] else None,
        "nav_section": "double_work",
    }
    return TemplateResponse(request, "annotation/workspace.html", context)
