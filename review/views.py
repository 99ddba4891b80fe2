"""Review pages: the queue, a parent's slot, the blind page, the reveal page with the decision form,
agreement, audit campaigns and assessments, signoff + export, accounting (paper Tables 4 and 5)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audit.disclosure import exposed_parent_ids
from physalign_site.access import require
from physalign_site.errors import ApplicationError
from probes.attachments import attachment_of
from probes.models import Probe
from probes.release_store import releases_root
from probes.release_words import release_export_message

from . import services
from .forms import (
    AuditActionForm,
    BlindAnswerForm,
    BlindOrderForm,
    ClaimForm,
    DecisionForm,
    KitUploadForm,
    SignoffForm,
    first_error,
)
from .models import (
    CONFIRMATIONS,
    SIGNOFF_CONFIRMATIONS,
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    ReviewSlot,
    Role,
    Severity,
    Signoff,
)
from .permissions import (
    can_manage_audit,
    can_manage_kit_decisions,
    can_review,
    can_view_agreement,
    can_work_slot,
    is_key_holder,
)
from .reports import accounting_tables, agreement_report
from .selectors import (
    BlindOrder,
    attachment_rows,
    blind_order_name,
    blind_order_of,
    blind_progress,
    candidate_picks,
    kit_decision_overview,
    my_slots,
    next_step,
    open_contexts,
    reveal_payload,
    slot_rows,
    slot_work,
    unclaimed_counts,
)
from .services.kit_decisions_export import kit_decisions_export, kit_draft_find

# The keyboard shortcuts of the blind and target pages (static/js/review_keys.js), listed on the page.
BLIND_SHORTCUTS = (("1–9", "choose candidate 1–9 of the list"), ("n", "next probe"))
TARGET_SHORTCUTS = (
    ("c", "tick all six confirmations (press only when all six hold)"),
    ("a", "approve"),
    ("r", "reject (asks for the note first)"),
    ("n", "next probe"),
)


def _slot(request: HttpRequest, slot_id: int, queryset: Any = ReviewSlot.objects) -> ReviewSlot:
    """The slot, for its reviewer only (404 when there is none, 403 for anyone else)."""
    slot = get_object_or_404(queryset, pk=slot_id)
    if not can_work_slot(request.user, slot):
        raise PermissionDenied
    return slot


def _slot_probe(request: HttpRequest, slot_id: int, logical_probe_id: str) -> tuple[ReviewSlot, Probe]:
    slot = _slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
    probe = get_object_or_404(
        Probe.objects.select_related("parent", "key"), logical_probe_id=logical_probe_id
    )
    if probe.logical_probe_id not in {p.logical_probe_id for p in slot_work(slot, include_done=True)}:
        raise Http404
    return slot, probe


@login_required
@require_GET
@require(can_review)
def queue(request: HttpRequest) -> HttpResponse:
    counts = unclaimed_counts()
    roles = [Role.PRIMARY, Role.SECONDARY, Role.ADJUDICATOR]
    contexts = open_contexts()
    orders = {c: blind_order_of(c) for c, _ in contexts}
    offers = [
        {
            "context": c,
            "label": label,
            "blind_order": orders[c],
            "blind_order_name": blind_order_name(orders[c]),
            "roles": [(r.value, r.label, counts.get((c, r.value), 0)) for r in roles],
        }
        for c, label in contexts
    ]
    return TemplateResponse(
        request,
        "review/queue.html",
        {
            "slots": my_slots(request.user),
            "offers": offers,
            "blind_orders": BlindOrder.choices,
            "can_set_blind_order": can_manage_audit(request.user),
            "key_holder": is_key_holder(request.user),
            "seen_parents": exposed_parent_ids(request.user).distinct().count(),
            "nav_section": "review",
        },
    )


@login_required
@require_POST
@require(can_manage_audit)
def blind_order(request: HttpRequest) -> HttpResponse:
    """An admin chooses a context's blind order (strict by default, or the Kit's)."""
    form = BlindOrderForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return redirect("review:queue")
    try:
        setting = services.review_context_set_blind_order(
            context=form.cleaned_data["context"], order=form.cleaned_data["blind_order"], actor=request.user
        )
        messages.success(request, f"{setting.context}: {setting.get_blind_order_display()}.")
    except ApplicationError as error:
        messages.error(request, error.message)
    return redirect("review:queue")


@login_required
@require_POST
def release(request: HttpRequest, slot_id: int) -> HttpResponse:
    slot = _slot(request, slot_id)
    try:
        services.review_release(slot=slot, reviewer=request.user)
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("review:slot", slot.pk)
    messages.success(request, f"{slot.parent.problem_id} is back in the queue.")
    return redirect("review:queue")


@login_required
@require_POST
@require(can_review)
def claim(request: HttpRequest) -> HttpResponse:
    form = ClaimForm(request.POST)
    if not form.is_valid():
        messages.error(request, first_error(form))
        return redirect("review:queue")
    try:
        slot = services.review_claim(
            reviewer=request.user, role=form.cleaned_data["role"], context=form.cleaned_data["context"]
        )
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("review:queue")
    return redirect("review:slot", slot.pk)


@login_required
@require_GET
def slot_detail(request: HttpRequest, slot_id: int) -> HttpResponse:
    slot = _slot(request, slot_id, ReviewSlot.objects.select_related("parent"))
    progress = blind_progress(slot)
    rows: list[dict[str, Any]] = [
        {
            "row": row,
            "answer_gate": progress.answer_gate(row.probe),
            "reveal_gate": progress.reveal_gate(row.probe),
        }
        for row in slot_rows(slot)
    ]
    return TemplateResponse(
        request,
        "review/slot.html",
        {
            "slot": slot,
            "rows": rows,
            "next": next_step(slot, progress),
            "progress": progress,
            "blind_order_name": blind_order_name(progress.order),
            "all_decided": all(r["row"].decision is not None for r in rows),
            "can_release": not any(r["row"].blind for r in rows),
            "nav_section": "review",
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def probe_blind(request: HttpRequest, slot_id: int, logical_probe_id: str) -> HttpResponse:
    """Exactly the public raw prompt and attachments, and the blind-answer form."""
    slot, probe = _slot_probe(request, slot_id, logical_probe_id)
    contract = services.contract_of(probe)
    if request.method == "POST":
        form = BlindAnswerForm(request.POST, read_anchor_ids=contract["read_anchor_ids"])
        try:
            if not form.is_valid():
                raise ApplicationError(first_error(form), code="form_invalid")
            services.review_submit_blind(slot=slot, probe=probe, reviewer=request.user, given=form.answer())
        except ApplicationError as error:
            messages.error(request, error.message)
            return redirect("review:probe", slot.pk, probe.logical_probe_id)
        gate = blind_progress(slot).reveal_gate(probe)
        if gate.allowed:
            return redirect("review:target", slot.pk, probe.logical_probe_id)
        messages.success(request, f"Blind answer recorded. {gate.message}")
        return redirect("review:slot", slot.pk)
    progress = blind_progress(slot)
    blind = probe.blind_answers.filter(slot=slot, review_target_root=probe.review_target_root).first()
    picks = candidate_picks(probe, contract["aliases"])
    return TemplateResponse(
        request,
        "review/probe_blind.html",
        {
            "slot": slot,
            "probe": probe,
            "contract": contract,
            "blind": blind,
            "picks": picks,
            "attachments": attachment_rows(probe, picks if blind is None else []),
            "next": next_step(slot, progress, skip=probe),
            "shortcuts": BLIND_SHORTCUTS,
            "nav_section": "review",
            "answer_gate": progress.answer_gate(probe),
            "reveal_gate": progress.reveal_gate(probe),
            "progress": progress,
            "messages_shown": probe.raw_messages,
        },
    )


def _target_context(slot: ReviewSlot, probe: Probe) -> dict:
    payload = reveal_payload(slot, probe)
    reviews = {d["role"]: d for d in payload["other_decisions"]}
    decision = probe.review_decisions.filter(slot=slot, review_target_root=probe.review_target_root).first()
    return {
        "slot": slot,
        "probe": probe,
        "payload": payload,
        "decision": decision,
        "packet_ids": payload["packet_plan"]["observation_ids"],
        "source_records": json.dumps(payload["source_records"], ensure_ascii=False, indent=1),
        "diagnostics": json.dumps(payload["diagnostics"], ensure_ascii=False, indent=1),
        "mapping": json.dumps(payload["candidate_map"], ensure_ascii=False, indent=1),
        "confirmations": CONFIRMATIONS,
        "severities": Severity.choices,
        "empty_reasons": services.EMPTY_REASONS,
        "attachments": attachment_rows(probe, []),
        "reviews": [reviews.get(role) for role in (Role.PRIMARY, Role.SECONDARY)],
        "next": next_step(slot, blind_progress(slot), skip=probe),
        "shortcuts": TARGET_SHORTCUTS,
        "nav_section": "review",
    }


@login_required
@require_http_methods(["GET", "POST"])
def probe_target(request: HttpRequest, slot_id: int, logical_probe_id: str) -> HttpResponse:
    """The private side. 403 with the reason until the blind order allows it (``BlindProgress.reveal_gate``)."""
    slot, probe = _slot_probe(request, slot_id, logical_probe_id)
    gate = blind_progress(slot).reveal_gate(probe)
    if not gate.allowed:
        raise PermissionDenied(gate.message)
    if request.method == "POST":
        form = DecisionForm(request.POST)
        try:
            if not form.is_valid():
                raise ApplicationError(first_error(form), code="form_invalid")
            given = form.decision()
            services.review_decide(slot=slot, probe=probe, reviewer=request.user, given=given)
        except ApplicationError as error:
            messages.error(request, error.message)
            return redirect("review:target", slot.pk, probe.logical_probe_id)
        messages.success(request, f"Decision recorded: {given.status} ({given.severity}).")
        return redirect("review:slot", slot.pk)
    return TemplateResponse(request, "review/probe_target.html", _target_context(slot, probe))


@login_required
@require_GET
def attachment(request: HttpRequest, slot_id: int, logical_probe_id: str, asset_id: str) -> HttpResponse:
    """The exact bytes a model receives for one attachment (same source as the probe browser)."""
    slot, probe = _slot_probe(request, slot_id, logical_probe_id)
    attachment = attachment_of(probe, asset_id)
    if attachment is None:
        raise Http404
    try:
        data = attachment.read()
    except FileNotFoundError as exc:
        raise Http404("The attachment's file is missing from the media storage.") from exc
    return HttpResponse(data, content_type=attachment.media_type)


@login_required
@require_GET
@require(can_view_agreement)
def agreement(request: HttpRequest) -> HttpResponse:
    context = request.GET.get("context", "development")
    return TemplateResponse(
        request,
        "review/agreement.html",
        {
            "report": agreement_report(context=context),
            "contexts": open_contexts(),
            "context": context,
            "nav_section": "agreement",
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_audit)
def audit_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        campaign = services.audit_campaign_create(actor=request.user)
        messages.success(request, f"Campaign {campaign.campaign_id[:16]}… created with a fresh random nonce.")
        return redirect("review:audit_detail", campaign.pk)
    return TemplateResponse(
        request, "review/audit_list.html", {"campaigns": AuditCampaign.objects.all(), "nav_section": "audit"}
    )


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_audit)
def audit_detail(request: HttpRequest, campaign_pk: int) -> HttpResponse:
    campaign = get_object_or_404(AuditCampaign, pk=campaign_pk)
    if request.method == "POST":
        form = AuditActionForm(request.POST)
        try:
            if not form.is_valid():
                raise ApplicationError(first_error(form), code="form_invalid")
            if form.cleaned_data["action"] == "assess":
                plan = get_object_or_404(AuditPlan, pk=form.cleaned_data["plan"], campaign=campaign)
                assessment = services.audit_assess(plan=plan, actor=request.user)
                messages.success(
                    request,
                    "Assessment: "
                    + (
                        "accepted"
                        if assessment.accepted
                        else "blocked by " + ", ".join(assessment.result["blockers"])
                    ),
                )
            else:
                plan = services.audit_plan_create(campaign=campaign, actor=request.user)
                messages.success(
                    request, f"Round {plan.round_number} plan drawn: {len(plan.sample)} sampled parents."
                )
        except ApplicationError as error:
            messages.error(request, f"{error.message} ({error.code})")
        return redirect("review:audit_detail", campaign.pk)
    plans: list[dict[str, Any]] = []
    for plan in campaign.plans.all():
        plans.append(
            {
                "plan": plan,
                "live": services.audit_assess_compute(plan),
                "assessment": plan.assessments.first(),
            }
        )
    # Another round makes sense only while fewer than two exist and none has been accepted.
    can_draw_plan = len(plans) < 2 and not any(p["assessment"] and p["assessment"].accepted for p in plans)
    return TemplateResponse(
        request,
        "review/audit_detail.html",
        {"campaign": campaign, "plans": plans, "can_draw_plan": can_draw_plan, "nav_section": "audit"},
    )


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_audit)
def signoff(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SignoffForm(request.POST)
        try:
            if not form.is_valid():
                raise ApplicationError(first_error(form), code="form_invalid")
            data = form.cleaned_data
            if data["action"] == "export":
                item = get_object_or_404(Signoff, pk=data["signoff"])
                stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
                output = releases_root() / f"signoff-{item.pk}-{stamp}"
                release = services.signoff_export(signoff=item, output=output, actor=request.user)
                messages.success(request, release_export_message(release))
            else:
                assessment = AuditAssessment.objects.filter(pk=data["assessment"]).first()
                services.signoff_create(
                    actor=request.user,
                    mode=data["mode"],
                    assessment=assessment,
                    confirmations=form.confirmations(),
                    evidence_ref=data["evidence_ref"],
                )
                messages.success(request, "Signed off.")
        except ApplicationError as error:
            messages.error(request, f"{error.message} ({error.code})")
        return redirect("review:signoff")
    return TemplateResponse(
        request,
        "review/signoff.html",
        {
            "signoffs": Signoff.objects.select_related("release", "reviewer")[:50],
            "assessments": AuditAssessment.objects.filter(accepted=True).select_related("plan__campaign")[
                :20
            ],
            "confirmations": SIGNOFF_CONFIRMATIONS,
            "modes": Signoff.Mode.choices,
            "nav_section": "signoff",
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
@require(can_manage_kit_decisions)
def kit_decisions(request: HttpRequest) -> HttpResponse:
    """Admins bring a Kit team's review decisions in: first the Kit draft (or review project) as a zip, which
    binds each equal Kit probe to ours, then the decision files made on the Kit's review page."""
    if request.method == "POST":
        form = KitUploadForm(request.POST, request.FILES)
        try:
            if not form.is_valid():
                raise ApplicationError(first_error(form), code="form_invalid")
            upload = form.cleaned_data["file"]
            if upload is None:
                raise ApplicationError("Choose a file to upload.", code="file_missing")
            if form.cleaned_data["action"] == "draft":
                record = services.kit_draft_upload(upload=upload, actor=request.user)
                bound, differing = len(record.summary["bound"]), len(record.summary["differing"])
                messages.success(
                    request,
                    f"Kit draft {record.catalog_root[:12]}… checked: {bound} probe(s) bound to "
                    f"ours, {differing} not bound.",
                )
            else:
                report = services.kit_decisions_upload(upload=upload, actor=request.user)
                messages.success(
                    request,
                    f"Imported {len(report.imported)} decision(s) ({len(report.settled)} settled "
                    f"a probe), {len(report.unchanged)} already imported, {len(report.pending)} "
                    f"still pending in the file.",
                )
        except ApplicationError as error:
            messages.error(request, f"{error.message} ({error.code})")
        return redirect("review:kit_decisions")
    return TemplateResponse(
        request, "review/kit_decisions.html", {**kit_decision_overview(), "nav_section": "kit_decisions"}
    )


@login_required
@require_GET
@require(can_manage_kit_decisions)
def kit_decisions_download(request: HttpRequest) -> HttpResponse:
    """Our decisions on the probes an imported Kit draft binds (``?draft=<catalog root>``), as the
    ``physalign_decisions_v1`` file the Kit's review page and check_review read."""
    try:
        result = kit_decisions_export(
            draft=kit_draft_find(catalog_root=request.GET.get("draft", "")), actor=request.user
        )
    except ApplicationError as error:
        messages.error(request, f"{error.message} ({error.code})")
        return redirect("review:kit_decisions")
    response = HttpResponse(result.data, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{result.filename}"'
    return response


@login_required
@require_GET
@require(can_view_agreement)
def accounting(request: HttpRequest) -> HttpResponse:
    return TemplateResponse(
        request, "review/accounting.html", {**accounting_tables(), "nav_section": "accounting"}
    )
