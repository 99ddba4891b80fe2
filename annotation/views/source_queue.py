"""The source reviewer's queue: submitted passes 1–4, oldest first, and approvals gone stale."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from physalign_site.access import require

from ..permissions import can_review_pass
from ..selectors import ANNOTATION_PASSES, SOURCE_QUEUE_AGES, source_review_queue, stale_approvals

QUEUE_PER_PAGE = 50


@login_required
@require_GET
@require(can_review_pass)
def source_queue(request: HttpRequest) -> TemplateResponse:
    search = request.GET.get("q", "").strip()[:200]
    pass_text = request.GET.get("pass", "")
    pass_no = int(pass_text) if pass_text in {str(n) for n in ANNOTATION_PASSES} else None
    age = request.GET.get("age", "")
    age = age if age in SOURCE_QUEUE_AGES else ""
    queue = source_review_queue(search=search, pass_no=pass_no, older_than_days=SOURCE_QUEUE_AGES[age])
    page = Paginator(queue, QUEUE_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "now": timezone.now(),
        "filters": {"q": search, "pass": pass_text if pass_no else "", "age": age},
        "passes": ANNOTATION_PASSES,
        "ages": [
            ("", "Any age"),
            ("1", "Older than 1 day"),
            ("3", "Older than 3 days"),
            ("7", "Older than a week"),
        ],
        "stale": list(stale_approvals()[:50]),
        "nav_section": "source_review",
    }
    return TemplateResponse(request, "annotation/source_queue.html", context)
