"""Matrix rows for annotation agreement (annotation.agreement): the summary, a pair's page, every CSV and the API
are the admins' alone. The matrix annotator is the second annotator of ``agreement_matrix`` (and the pair's
page is theirs): they are refused like every other role, since the pages show the first annotation's counts;
anonymous visitors go to the login page."""

from __future__ import annotations

from typing import Any

from annotation.models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from kit.canonical import digest
from tests.conftest import make_user
from tests.endpoint_matrix import ADM, ANN, ANON, Case, World, only, statuses
from tests.factories import ParentProblemFactory, PassDocumentFactory, SourceFactory

PID = "agreement_matrix"
PAGE = "/agreement/"
ADMINS = only({ADM: 200, ANON: 302})


def _pair(world: World, suffix: str = "/", pass_no: int = 1) -> str:
    return f"{PAGE}pairs/{world.agreement_first_id}-{world.agreement_second_id}/passes/{pass_no}{suffix}"


CASES: list[Case] = [
    Case("annotation agreement page", "get", PAGE, expected=ADMINS, fmt=None),
    Case(
        "annotation agreement page, one sample",
        "get",
        lambda w: f"{PAGE}?sample={w.agreement_sample_id}&threshold=0.7",
        expected=ADMINS,
        fmt=None,
    ),
    Case(
        "annotation agreement page, bad threshold",
        "get",
        f"{PAGE}?threshold=3",
        expected=only({ADM: 400, ANON: 302}),
        fmt=None,
    ),
    Case("annotation agreement page POST", "post", PAGE, expected=statuses(405), fmt=None),
    *(
        Case(f"annotation agreement {table} CSV", "get", f"{PAGE}{table}.csv", expected=ADMINS, fmt=None)
        for table in ("pass1", "pass2", "pass3")
    ),
    Case(
        "annotation agreement unknown CSV",
        "get",
        f"{PAGE}nope.csv",
        expected=only({ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case("annotation agreement pair page", "get", _pair, expected=ADMINS, fmt=None),
    Case("annotation agreement pair CSV", "get", lambda w: _pair(w, ".csv"), expected=ADMINS, fmt=None),
    Case(
        "annotation agreement pair page, a pass not compared",
        "get",
        lambda w: _pair(w, pass_no=2),
        expected=only({ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "annotation agreement pair page, Pass 4",
        "get",
        lambda w: _pair(w, pass_no=4),
        expected=only({ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case("annotation agreement API", "get", "/api/agreement/", expected=only({ADM: 200})),
    Case(
        "annotation agreement API, one sample",
        "get",
        lambda w: f"/api/agreement/?sample={w.agreement_sample_id}",
        expected=only({ADM: 200}),
    ),
    Case(
        "annotation agreement API, bad sample", "get", "/api/agreement/?sample=x", expected=only({ADM: 400})
    ),
    Case("annotation agreement API POST", "post", "/api/agreement/", expected=only({ADM: 405})),
]


def populate(world: World, users: dict[str, Any]) -> None:
    """A parent whose first annotation (Pass 1) is ``agreement_first``'s and whose second is the matrix
    annotator's."""
    first = make_user(users[ADM].__class__, "agreement_first", "annotator")
    source = SourceFactory(name="agreement-matrix")
    parent = ParentProblemFactory(problem_id=PID, source=source)
    node = {
        "id": "v001",
        "type": "object_shape",
        "subtype": "",
        "text": "",
        "image_id": "img_0",
        "bbox_1000": [100, 100, 200, 200],
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }
    document = {"problem_id": PID, "visual_nodes": [node], "ambiguities": []}
    PassDocumentFactory(parent=parent, pass_no=1, document=document, updated_by=first)
    sample = DoubleAnnotationSample.objects.create(source=source, count=1, seed=1)
    second = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=users[ANN])
    IndependentPassDocument.objects.create(
        second=second, pass_no=1, document=document, document_sha256=digest(document), updated_by=users[ANN]
    )
    world.agreement_first_id = first.pk
    world.agreement_second_id = users[ANN].pk
    world.agreement_sample_id = sample.pk
