"""Draft pages: start drafting, follow a run's progress, review drafts against the current pass
document and accept whole, accept per record or discard (htmx-friendly, plain forms work too)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from models_registry.models import ModelConfig
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from ..models import DraftRun, LLMDraft, ParentProblem, PassDocument
from ..permissions import DRAFTABLE_PASSES, can_draft
from .services import (
    REVIEWABLE,
    draft_accept,
    draft_discard,
    draft_run_create,
    draft_run_progress,
    record_comparison,
)

RECENT_RUNS = 20


def _can_draft_pass(user: Any, pass_no: int) -> bool:
    """``can_draft`` for a pass number from the form, which may name no pass at all: that is a 404, as a
    URL with one is (the ``pass_no`` converter)."""
    if pass_no not in DRAFTABLE_PASSES:
        raise Http404
    return can_draft(user, pass_no)


def _can_use_drafting(user: Any) -> bool:
    """The drafting home: whoever may draft a pass (drafting follows edit rights, the same for every pass)."""
    return can_draft(user, 1)


def _partial(request: HttpRequest) -> bool:
    htmx: HtmxDetails = request.htmx  # type: ignore[attr-defined]  # set on every request by HtmxMiddleware
    return bool(htmx) and not htmx.history_restore_request


@login_required
@require_http_methods(["GET", "POST"])
@require(_can_use_drafting)
def draft_home(request: HttpRequest) -> HttpResponse:
    models = ModelConfig.objects.filter(is_active=True)
    if request.method == "POST":
        try:
            pass_no = int_param(request.POST.get("pass_no"), name="pass_no") or 0
            if not _can_draft_pass(request.user, pass_no):
                raise PermissionDenied
            model_config = get_object_or_404(ModelConfig, name=request.POST.get("model", ""), is_active=True)
            ids = [
                pid.strip()
                for pid in request.POST.get("problem_ids", "").replace(",", " ").split()
                if pid.strip()
            ]
            parents = list(
                ParentProblem.objects.filter(problem_id__in=ids)
                if ids
                else ParentProblem.objects.exclude(status=ParentProblem.Status.EXCLUDED)
            )
            run = draft_run_create(
                pass_no=pass_no, model_config=model_config, parents=parents, actor=request.user
            )
        except ApplicationError as exc:
            messages.error(request, exc.message)
            return redirect("drafts:home")
        return redirect("drafts:run_detail", run_id=run.pk)
    runs = DraftRun.objects.select_related("model_config").order_by("-created_at")[:RECENT_RUNS]
    return TemplateResponse(
        request,
        "drafts/home.html",
        {"runs": runs, "models": models, "passes": DRAFTABLE_PASSES, "nav_section": "drafts"},
    )


@login_required
@require_GET
def draft_run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(DraftRun.objects.select_related("model_config"), pk=run_id)
    if not _can_draft_pass(request.user, run.pass_no):
        raise PermissionDenied
    drafts = run.drafts.select_related("parent").order_by("parent__problem_id")
    context = {
        "run": run,
        "progress": draft_run_progress(run=run),
        "drafts": drafts,
        "running": run.finished_at is None,
        "nav_section": "drafts",
    }
    template = "drafts/run.html#progress" if _partial(request) else "drafts/run.html"
    return TemplateResponse(request, template, context)


@login_required
@require_GET
@require(_can_draft_pass, kwargs=("pass_no",))
def draft_review(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    parent = get_object_or_404(ParentProblem, problem_id=problem_id)
    current = PassDocument.objects.filter(parent=parent, pass_no=pass_no).first()
    drafts = list(
        LLMDraft.objects.filter(parent=parent, pass_no=pass_no).select_related("model_config", "run")
    )
    cards = []
    for draft in drafts:
        rows = (
            record_comparison(
                draft_document=draft.parsed_document, current_document=current.document if current else None
            )
            if draft.parsed_document is not None
            else []
        )
        for row in rows:  # shown as JSON, as the annotator will see it in the document
            row["draft_json"] = (
                json.dumps(row["draft"], ensure_ascii=False) if row["draft"] is not None else "—"
            )
            row["current_json"] = (
                json.dumps(row["current"], ensure_ascii=False) if row["current"] is not None else "—"
            )
        cards.append(
            {
                "draft": draft,
                "rows": rows,
                "reviewable": draft.status in REVIEWABLE and draft.parsed_document is not None,
                "counts": {
                    state: sum(1 for r in rows if r["state"] == state)
                    for state in ("new", "changed", "same", "current_only")
                },
            }
        )
    context = {
        "parent": parent,
        "pass_no": pass_no,
        "current": current,
        "cards": cards,
        "passes": DRAFTABLE_PASSES,
        "models": ModelConfig.objects.filter(is_active=True),
        "nav_section": "drafts",
        "pending": any(d.status == LLMDraft.Status.PENDING for d in drafts),
    }
    template = "drafts/review.html#drafts" if _partial(request) else "drafts/review.html"
    return TemplateResponse(request, template, context)


def _back(parent: ParentProblem, pass_no: int) -> HttpResponse:
    return redirect(reverse("drafts:review", args=[parent.problem_id, pass_no]))


@login_required
@require_POST
@require(_can_draft_pass, kwargs=("pass_no",))
def draft_start(request: HttpRequest, problem_id: str, pass_no: int) -> HttpResponse:
    parent = get_object_or_404(ParentProblem, problem_id=problem_id)
    model_config = ModelConfig.objects.filter(name=request.POST.get("model", ""), is_active=True).first()
    if model_config is None:
        messages.error(request, "Choose an active model.")
        return _back(parent, pass_no)
    try:
        draft_run_create(pass_no=pass_no, model_config=model_config, parents=[parent], actor=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Drafting Pass {pass_no} with {model_config.name}.")
    return _back(parent, pass_no)


@login_required
@require_POST
def draft_accept_view(request: HttpRequest, draft_id: int) -> HttpResponse:
    draft = get_object_or_404(LLMDraft.objects.select_related("parent"), pk=draft_id)
    if not _can_draft_pass(request.user, draft.pass_no):
        raise PermissionDenied
    keys = request.POST.getlist("record") if request.POST.get("mode") == "records" else None
    if keys is not None and not keys:
        messages.error(request, "Tick at least one record to accept.")
        return _back(draft.parent, draft.pass_no)
    try:
        expected = int_param(request.POST.get("expected_version"), name="expected_version")
        doc = draft_accept(draft=draft, actor=request.user, expected_version=expected, record_keys=keys)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        draft.refresh_from_db()
        stats = draft.acceptance
        messages.success(
            request,
            f"Accepted draft #{draft.pk} into Pass {draft.pass_no} v{doc.version} "
            f"({stats['kept']} kept, {stats['added']} added, {stats['removed']} left out, "
            f"{stats['changed']} changed).",
        )
    return _back(draft.parent, draft.pass_no)


@login_required
@require_POST
def draft_discard_view(request: HttpRequest, draft_id: int) -> HttpResponse:
    draft = get_object_or_404(LLMDraft.objects.select_related("parent"), pk=draft_id)
    if not _can_draft_pass(request.user, draft.pass_no):
        raise PermissionDenied
    try:
        draft_discard(draft=draft, actor=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Discarded draft #{draft.pk}.")
    return _back(draft.parent, draft.pass_no)
