"""Matrix rows for annotation analytics: the page, every CSV and the API are the admins' alone (an annotator sees neither
their own figures nor another annotator's); anonymous visitors go to the login page."""

from __future__ import annotations

from typing import Any

from audit.services import event_record
from tests.endpoint_matrix import ADM, ANN, ANON, Case, World, only, statuses
from tests.factories import ParentProblemFactory, PassDocumentFactory, SourceFactory

ADMINS = only({ADM: 200, ANON: 302})
PAGE = "/analytics/annotation/"

CASES: list[Case] = [
    Case("annotation analytics page", "get", PAGE, expected=ADMINS, fmt=None),
    Case("annotation analytics page, all time", "get", f"{PAGE}?from=&to=", expected=ADMINS, fmt=None),
    Case(
        "annotation analytics page, reversed period",
        "get",
        f"{PAGE}?from=2026-02-01&to=2026-01-01",
        expected=only({ADM: 400, ANON: 302}),
        fmt=None,
    ),
    Case("annotation analytics page POST", "post", PAGE, expected=statuses(405), fmt=None),
    *(
        Case(f"annotation analytics {table} CSV", "get", f"{PAGE}{table}.csv", expected=ADMINS, fmt=None)
        for table in ("annotators", "annotator_totals", "sources", "domains", "rejections")
    ),
    Case("annotation analytics API", "get", "/api/annotation-analytics/", expected=only({ADM: 200})),
    Case(
        "annotation analytics API, reversed period",
        "get",
        "/api/annotation-analytics/?from=2026-02-01&to=2026-01-01",
        expected=only({ADM: 400}),
    ),
    Case("annotation analytics API POST", "post", "/api/annotation-analytics/", expected=only({ADM: 405})),
    Case(
        "annotation analytics unknown CSV",
        "get",
        f"{PAGE}nope.csv",
        expected=only({ADM: 404, ANON: 302}),
        fmt=None,
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    """One save by the matrix annotator, so the figures name them."""
    parent = ParentProblemFactory(
        problem_id="analytics-matrix", source=SourceFactory(name="analytics-matrix")
    )
    doc = PassDocumentFactory(parent=parent, pass_no=1, updated_by=users[ANN])
    event_record(actor=users[ANN], verb="pass_document.save", obj=doc)
    world.analytics_doc_id = doc.pk
