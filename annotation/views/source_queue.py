"""The source reviewer's queue: submitted passes 1–4, those assigned to the reviewer first, then oldest first, and
approvals gone stale."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from physalign_site.access import require

from ..permissions import can_review_pass
from ..selectors import ANNOTATION_PASSES, SourceQueueFilters, source_review_progress, stale_approvals
from ..source_reviews import source_queue_for

QUEUE_PER_PAGE = 50


@login_required
@require_GET
@require(can_review_pass)
def source_queue(request: HttpRequest) -> TemplateResponse:
    filters = SourceQueueFilters.from_query(request.GET)
    queue = source_queue_for(queue=filters.queue(), reviewer=request.user)
    page = Paginator(queue, QUEUE_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "now": timezone.now(),
        "filters": {"q": filters.search, "pass": str(filters.pass_no or ""), "age": filters.age},
        # carried to each review page, so "Approve and next" takes the next pass of this very queue
        "filter_query": urlencode(filters.as_query()),
        "progress": source_review_progress(filters=filters),
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
