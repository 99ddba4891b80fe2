"""The release datasheet's downloads (admins, like the release page that shows it): the long CSV and the JSON."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from physalign_site.access import require

from ..models import Release
from ..permissions import can_manage_probes
from .selectors import datasheet_for_release
from .tables import chart_data, csv_text, datasheet_tables, json_text


def _download(text: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
@require(can_manage_probes)
def datasheet_csv(request: HttpRequest, release_id: str) -> HttpResponse:
    release = get_object_or_404(Release, release_id=release_id)
    return _download(
        csv_text(datasheet_for_release(release)),
        "text/csv; charset=utf-8",
        f"{release.release_id[:21]}-datasheet.csv",
    )


@require_GET
@require(can_manage_probes)
def datasheet_json(request: HttpRequest, release_id: str) -> HttpResponse:
    release = get_object_or_404(Release, release_id=release_id)
    return _download(
        json_text(datasheet_for_release(release)),
        "application/json; charset=utf-8",
        f"{release.release_id[:21]}-datasheet.json",
    )


def datasheet_context(release: Release) -> dict[str, object]:
    """What the release page's Datasheet section shows (``probes/_release_datasheet.html``)."""
    sheet = datasheet_for_release(release)
    return {"sheet": sheet, "tables": datasheet_tables(sheet), "chart": chart_data(sheet)}
