"""The agreement pages and their CSV downloads (admins only): the summary per pair of annotators and pass, and a
pair's page with one row per parent."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from physalign_site.access import require

from .forms import filter_form, form_errors
from .permissions import can_view_annotation_agreement
from .selectors import PASSES, AgreementSummary, PairAgreement, agreement_summary
from .tables import SUMMARY_TABLES, parents_table, summary_table

TEMPLATE = "annotation/agreement.html"
PAIR_TEMPLATE = "annotation/agreement_pair.html"


def _query(summary: AgreementSummary) -> str:
    params: dict[str, Any] = {}
    if summary.sample_id is not None:
        params["sample"] = summary.sample_id
    if summary.threshold != 0.5:
        params["threshold"] = summary.threshold
    return f"?{urlencode(params)}" if params else ""


def _pair_url(summary: AgreementSummary) -> Any:
    def url(pair: PairAgreement) -> str:
        return reverse("agreement:pair", args=[pair.first.id, pair.second.id, pair.pass_no]) + _query(summary)

    return url


def _bad_filter(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    return TemplateResponse(request, template, context, status=400)


@require_GET
@require(can_view_annotation_agreement)
def summary(request: HttpRequest) -> HttpResponse:
    form = filter_form(request.GET)
    context: dict[str, Any] = {"form": form, "nav_section": "annotation_agreement"}
    if not form.is_valid():
        return _bad_filter(request, TEMPLATE, context)
    data = agreement_summary(sample_id=form.sample_id(), threshold=form.threshold_value())
    query = _query(data)
    tables = [summary_table(data, pass_no, _pair_url(data)) for pass_no in PASSES]
    context.update(
        {
            "data": data,
            "tables": [
                {
                    "table": table,
                    "display_rows": table.display_rows(),
                    "csv_url": reverse("agreement:summary_csv", args=[table.slug]) + query,
                }
                for table in tables
            ],
            "api_url": reverse("agreement:api") + query,
        }
    )
    return TemplateResponse(request, TEMPLATE, context)


def _csv(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _csv_refusal(form: Any) -> HttpResponse:
    return HttpResponse(
        f"Bad filter: {form_errors(form)}\n", status=400, content_type="text/plain; charset=utf-8"
    )


def _suffix(data: AgreementSummary) -> str:
    return f"-sample{data.sample_id}" if data.sample_id is not None else ""


@require_GET
@require(can_view_annotation_agreement)
def summary_csv(request: HttpRequest, table: str) -> HttpResponse:
    if table not in SUMMARY_TABLES:
        raise Http404(f"No agreement table {table!r}; one of: {', '.join(SUMMARY_TABLES)}.")
    form = filter_form(request.GET)
    if not form.is_valid():
        return _csv_refusal(form)
    data = agreement_summary(sample_id=form.sample_id(), threshold=form.threshold_value())
    built = summary_table(data, int(table.removeprefix("pass")), _pair_url(data))
    return _csv(built.csv_text(), f"agreement-{table}{_suffix(data)}.csv")


def _pass_or_404(pass_no: int) -> None:
    if pass_no not in PASSES:
        raise Http404("Agreement compares Passes 1–3.")


@require_GET
@require(can_view_annotation_agreement)
def pair(request: HttpRequest, first_id: int, second_id: int, pass_no: int) -> HttpResponse:
    _pass_or_404(pass_no)
    form = filter_form(request.GET)
    context: dict[str, Any] = {"form": form, "nav_section": "annotation_agreement", "pass_no": pass_no}
    if not form.is_valid():
        return _bad_filter(request, PAIR_TEMPLATE, context)
    data = agreement_summary(sample_id=form.sample_id(), threshold=form.threshold_value())
    found = data.pair(first_id, second_id, pass_no)
    if found is None:
        raise Http404("No parent of this pass compares these two annotators.")
    table = parents_table(data.parents_of(first_id, second_id, pass_no), pass_no)
    pooled = summary_table(
        AgreementSummary(data.threshold, data.sample_id, [], [found]), pass_no, _pair_url(data)
    )
    query = _query(data)
    context.update(
        {
            "data": data,
            "pair": found,
            "table": table,
            "display_rows": table.display_rows(),
            "pooled": pooled,
            "pooled_rows": pooled.display_rows(),
            "csv_url": reverse("agreement:pair_csv", args=[first_id, second_id, pass_no]) + query,
            "summary_url": reverse("agreement:summary") + query,
            "other_passes": [
                {"pass_no": n, "url": reverse("agreement:pair", args=[first_id, second_id, n]) + query}
                for n in PASSES
                if n != pass_no and data.pair(first_id, second_id, n) is not None
            ],
        }
    )
    return TemplateResponse(request, PAIR_TEMPLATE, context)


@require_GET
@require(can_view_annotation_agreement)
def pair_csv(request: HttpRequest, first_id: int, second_id: int, pass_no: int) -> HttpResponse:
    _pass_or_404(pass_no)
    form = filter_form(request.GET)
    if not form.is_valid():
        return _csv_refusal(form)
    data = agreement_summary(sample_id=form.sample_id(), threshold=form.threshold_value())
    if data.pair(first_id, second_id, pass_no) is None:
        raise Http404("No parent of this pass compares these two annotators.")
    table = parents_table(data.parents_of(first_id, second_id, pass_no), pass_no)
    return _csv(table.csv_text(), f"agreement-{first_id}-{second_id}-pass{pass_no}{_suffix(data)}.csv")
