"""Matrix rows for double annotation (annotation.double): the admins' samples, the second annotator's own work,
workspace and API; and the blind rule — the matrix annotator is the second annotator of ``dbl_matrix``, so every
way into its first annotation refuses them while the source reviewer and the admin still read it."""

from __future__ import annotations

from typing import Any

from annotation.models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from annotation.services import pass_document_save
from kit.canonical import digest
from tests.conftest import make_user
from tests.endpoint_matrix import ADM, ANN, ANON, SRC, Case, World, only
from tests.factories import ParentProblemFactory, ProblemImageFactory, SourceFactory

PID = "dbl_matrix"
OWN = f"/api/parents/{PID}/independent/passes/1/"
EMPTY = {"problem_id": PID, "visual_nodes": [], "ambiguities": []}

CASES: list[Case] = [
    Case(
        "double annotation samples page",
        "get",
        "/double-annotation/",
        expected=only({ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "double annotation sample form, invalid",
        "post",
        "/double-annotation/",
        {"source": "nope", "size": "x"},
        only({ADM: 400, ANON: 302}),
        fmt=None,
    ),
    Case(
        "double annotation samples API", "get", "/api/double-annotation-samples/", expected=only({ADM: 200})
    ),
    Case(
        "double annotation samples API create",
        "post",
        "/api/double-annotation-samples/",
        {"source": "matrix-double-spare", "count": 1, "annotators": ["dbl_matrix_second2"]},
        only({ADM: 201}),
    ),
    Case(
        "independent work list",
        "get",
        "/independent/",
        expected=only({ANN: 200, ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "independent problem page",
        "get",
        f"/problems/{PID}/independent/",
        expected=only({ANN: 302, ADM: 302, ANON: 302}),
        fmt=None,
    ),
    Case(
        "independent workspace",
        "get",
        f"/problems/{PID}/independent/passes/1/",
        expected=only({ANN: 200, ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "independent workspace, Pass 4",
        "get",
        f"/problems/{PID}/independent/passes/4/",
        expected=only({ANN: 404, ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case("independent pass API", "get", OWN, expected=only({ANN: 200, ADM: 200})),
    Case(
        "independent pass API save",
        "put",
        OWN,
        {"document": EMPTY | {"ambiguities": []}},
        only({ANN: 200, ADM: 403}),
        headers=lambda w: {"If-Match": '"1"'},
    ),
    Case(
        "independent pass API save, stale",
        "put",
        OWN,
        {"document": EMPTY},
        only({ANN: 409, ADM: 403}),
        headers={"If-Match": '"9"'},
    ),
    Case(
        "independent pass API submit, document invalid",
        "post",
        f"{OWN}submit/",
        {},
        only({ANN: 400, ADM: 403}),
    ),
    # the blind rule: the matrix annotator annotates dbl_matrix a second time
    Case(
        "first annotation of a double-annotated problem, pass API",
        "get",
        f"/api/parents/{PID}/passes/1/",
        expected=only({ANN: 403, SRC: 200, ADM: 200}),
    ),
    Case(
        "first annotation of a double-annotated problem, workspace",
        "get",
        f"/problems/{PID}/passes/1/",
        expected=only({ANN: 403, SRC: 200, ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "first annotation of a double-annotated problem, history",
        "get",
        f"/problems/{PID}/passes/1/history/",
        expected=only({ANN: 403, SRC: 200, ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "first annotation of a double-annotated problem, save",
        "put",
        f"/api/parents/{PID}/passes/1/",
        {"document": EMPTY},
        only({ANN: 403, ADM: 200}),
        headers={"If-Match": '"1"'},
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    source = SourceFactory(name="matrix-double")
    parent = ParentProblemFactory(problem_id=PID, source=source)
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1)
    first = make_user(type(users[ANN]), "dbl_matrix_first", "annotator")
    pass_document_save(parent=parent, pass_no=1, document=dict(EMPTY), actor=first, expected_version=None)
    sample = DoubleAnnotationSample.objects.create(source=source, count=1, created_by=users[ADM])
    second = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=users[ANN])
    IndependentPassDocument.objects.create(
        second=second, pass_no=1, document=EMPTY, document_sha256=digest(EMPTY), updated_by=users[ANN]
    )
    spare = SourceFactory(name="matrix-double-spare")
    ParentProblemFactory(problem_id="dbl_matrix_spare", source=spare)
    make_user(type(users[ANN]), "dbl_matrix_second2", "annotator")
