"""The main menu: pages grouped by the work they serve, each shown to whoever its view lets in.

Every item names the permission check its view uses, so the menu can never offer a page that answers 403
(tests/test_home.py opens every item as every role). Registered as a template context processor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from annotation.agreement.permissions import can_view_annotation_agreement
from annotation.assignments.permissions import can_manage_assignments
from annotation.double.permissions import can_annotate_independently, can_manage_double_annotation
from annotation.ocr.permissions import can_run_ocr_for_source
from annotation.permissions import can_draft, can_import, can_review_pass, can_view_problems
from annotation.physics.permissions import can_view_physics_rules
from evaluation.permissions import can_run_evaluations
from models_registry.permissions import can_manage_models
from physalign_site.roles import is_admin, user_roles
from probes.permissions import can_manage_probes
from review.permissions import can_manage_audit, can_manage_kit_decisions, can_review, can_view_agreement
from solving.permissions import can_run_solving


@dataclass(frozen=True)
class Item:
    label: str
    url_name: str
    section: str  # the ``nav_section`` a page of this item puts in its context
    allowed: Callable[[Any], bool]


MENUS: tuple[tuple[str, tuple[Item, ...]], ...] = (
    (
        "Annotation",
        (
            Item("Problems", "annotation:problem_list", "problems", can_view_problems),
            Item("Import", "annotation:import_list", "imports", can_import),
            Item("LLM drafts", "drafts:home", "drafts", lambda user: can_draft(user, 1)),
            Item("Physics rules", "physics:rules", "physics_rules", can_view_physics_rules),
            Item("OCR runs", "ocr:runs", "ocr_runs", can_run_ocr_for_source),
            Item("Independent annotation", "double:work", "double_work", can_annotate_independently),
        ),
    ),
    (
        "Review",
        (
            Item("Source review queue", "annotation:source_queue", "source_review", can_review_pass),
            Item("Probe review queue", "review:queue", "review", can_review),
            Item("Agreement", "review:agreement", "agreement", can_view_agreement),
            Item("Accounting", "review:accounting", "accounting", can_view_agreement),
            Item("Batch audit", "review:audit_list", "audit", can_manage_audit),
            Item("Signoff", "review:signoff", "signoff", can_manage_audit),
            Item("Kit decisions", "review:kit_decisions", "kit_decisions", can_manage_kit_decisions),
        ),
    ),
    (
        "Probes & releases",
        (
            Item("Compile runs", "probes:run_list", "compile", can_manage_probes),
            Item("Probes", "probes:probe_list", "probes", can_manage_probes),
            Item("Releases", "probes:release_list", "releases", can_manage_probes),
        ),
    ),
    (
        "Evaluation",
        (
            Item("Evaluation runs", "evaluation:run_list", "runs", can_run_evaluations),
            Item("Solving runs", "solving:solve_run_list", "solving", can_run_solving),
            Item("Debate runs", "solving:debate_run_list", "debate", can_run_solving),
            Item("Models", "models_registry:model_list", "models", can_manage_models),
        ),
    ),
    (
        "Admin",
        (
            Item("Assignments", "assignments:page", "assignments", can_manage_assignments),
            Item("Double annotation", "double:samples", "double", can_manage_double_annotation),
            Item(
                "Annotation agreement",
                "agreement:summary",
                "annotation_agreement",
                can_view_annotation_agreement,
            ),
            Item("Annotation analytics", "analytics:overview", "analytics", is_admin),
            Item(
                "Django admin", "admin:index", "django_admin", lambda user: is_admin(user) and user.is_staff
            ),
        ),
    ),
)


def menus_for(user: Any) -> list[dict[str, Any]]:
    """The groups this user may open, each with its visible items (empty groups are left out)."""
    groups = []
    for title, items in MENUS:
        visible = [
            {"label": item.label, "url": reverse(item.url_name), "section": item.section}
            for item in items
            if item.allowed(user)
        ]
        if visible:
            groups.append({"title": title, "items": visible, "sections": {i["section"] for i in visible}})
    return groups


def nav_menus(request: Any) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user_roles(user):
        return {"nav_menus": []}
    # lazy: a fragment (an htmx poll) that draws no menu asks no permission
    return {"nav_menus": SimpleLazyObject(lambda: menus_for(user))}
