"""The annotation analytics page and its CSV downloads (admins only)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from physalign_site.access import require

from .figures import ACTIVE_TIME_RULE
from .forms import period_form
from .permissions import can_view_annotation_analytics
from .selectors import annotation_analytics
from .tables import TABLES, chart_data

REJECTIONS_SHOWN = 100  # the page lists the newest ones; the CSV has every rejection of the period


@require_GET
@require(can_view_annotation_analytics)
def overview(request: HttpRequest) -> HttpResponse:
    form = period_form(request.GET)
    context: dict = {"form": form, "nav_section": "analytics", "active_time_rule": ACTIVE_TIME_RULE}
    if not form.is_valid():
        return TemplateResponse(request, "annotation/analytics.html", context, status=400)
    data = annotation_analytics(period=form.period())
    query = urlencode(data.period.query())
    tables = {slug: build(data) for slug, build in TABLES.items()}
    context.update(
        {
            "data": data,
            "tables": [
                {
                    "table": table,
                    "display_rows": table.display_rows()[:REJECTIONS_SHOWN]
                    if slug == "rejections"
                    else table.display_rows(),
                    "csv_url": f"{reverse('analytics:csv', args=[slug])}?{query}",
                }
                for slug, table in tables.items()
            ],
            "rejections_total": len(data.rejections),
            "rejections_shown": REJECTIONS_SHOWN,
            "chart": chart_data(data),
            "all_time_url": f"{reverse('analytics:overview')}?{urlencode({'from': '', 'to': ''})}",
        }
    )
    return TemplateResponse(request, "annotation/analytics.html", context)


@require_GET
@require(can_view_annotation_analytics)
def table_csv(request: HttpRequest, table: str) -> HttpResponse:
    build = TABLES.get(table)
    if build is None:
        raise Http404(f"No analytics table {table!r}; one of: {', '.join(TABLES)}.")
    form = period_form(request.GET)
    if not form.is_valid():
        errors = " ".join(str(e) for errors in form.errors.values() for e in errors)
        return HttpResponse(f"Bad period: {errors}\n", status=400, content_type="text/plain; charset=utf-8")
    period = form.period()
    response = HttpResponse(
        build(annotation_analytics(period=period)).csv_text(), content_type="text/csv; charset=utf-8"
    )
    span = (
        "all-time"
        if period.is_all_time
        else f"{period.query()['from'] or 'start'}_{period.query()['to'] or 'now'}"
    )
    response["Content-Disposition"] = f'attachment; filename="annotation-{table}-{span}.csv"'
    return response
