"""Matrix rows for curation (annotation.curation): the page, the page of an applied curation and the API are for admins
and source reviewers only — never for the parent's second annotator (who never sees the first annotation), nor for
the last editor of the first document; a parent without a second annotation, or Pass 5, is a 404."""

from __future__ import annotations

from typing import Any

from annotation.models import Curation, DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from kit.canonical import digest
from tests.conftest import make_user
from tests.endpoint_matrix import ADM, ANN, ANON, SRC, Case, World, only, statuses
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

CURATORS_PAGE = only({ADM: 200, SRC: 200, ANON: 302})
CURATORS_API = only({ADM: 200, SRC: 200})


def _region(box: list[int]) -> dict[str, Any]:
    return {
        "id": "v001",
        "type": "component_symbol",
        "subtype": "block",
        "text": "",
        "image_id": "img_0",
        "bbox_1000": box,
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }


def _page(key: str, pass_no: int = 1) -> Any:
    return lambda w: f"/problems/{getattr(w, key)}/passes/{pass_no}/curate/"


def _api(key: str) -> Any:
    return lambda w: f"/api/parents/{getattr(w, key)}/passes/1/curation/"


def _form(w: World) -> dict[str, str]:
    return {
        "expected_version": str(w.curation_version),
        "rows": "1",
        "collection-0": "visual_nodes",
        "first-0": "v001",
        "second-0": "v001",
        "keep-0": "second",
    }


BODY = {
    "choices": [{"collection": "visual_nodes", "first_id": "v001", "second_id": "v001", "keep": "second"}]
}

CASES: list[Case] = [
    Case("curation page", "get", _page("curation_pid"), expected=CURATORS_PAGE, fmt=None),
    Case(
        "curation page apply",
        "post",
        _page("curation_pid"),
        _form,
        only({ADM: 302, SRC: 302, ANON: 302}),
        fmt=None,
    ),
    Case(
        "curation page, the source reviewer is the second annotator",
        "get",
        _page("curation_pid_src_second"),
        expected=only({ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "curation page, the source reviewer edited the first document last",
        "get",
        _page("curation_pid_src_editor"),
        expected=only({ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "curation page, the annotator is the second annotator",
        "get",
        _page("curation_pid_ann_second"),
        expected=CURATORS_PAGE,
        fmt=None,
    ),
    Case(
        "curation page, no second annotation",
        "get",
        _page("curation_pid_single"),
        expected=only({ADM: 404, SRC: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "curation page, pass 5",
        "get",
        _page("curation_pid", 5),
        expected=only({ADM: 404, SRC: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "curation result page",
        "get",
        lambda w: f"/problems/{w.curation_pid}/passes/1/curations/{w.curation_id}/",
        expected=CURATORS_PAGE,
        fmt=None,
    ),
    Case(
        "curation result page, the source reviewer is the second annotator",
        "get",
        lambda w: f"/problems/{w.curation_pid_src_second}/passes/1/curations/{w.curation_id_src_second}/",
        expected=only({ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case("curation API", "get", _api("curation_pid"), expected=CURATORS_API),
    Case(
        "curation API apply",
        "post",
        _api("curation_pid"),
        BODY,
        CURATORS_API,
        headers=lambda w: {"If-Match": f'"{w.curation_version}"'},
    ),
    Case(
        "curation API apply, stale If-Match",
        "post",
        _api("curation_pid"),
        BODY,
        only({ADM: 409, SRC: 409}),
        headers=lambda w: {"If-Match": f'"{w.curation_version + 1}"'},
    ),
    Case(
        "curation API apply, no If-Match",
        "post",
        _api("curation_pid"),
        BODY,
        only({ADM: 428, SRC: 428}),
    ),
    Case(
        "curation API, the source reviewer is the second annotator",
        "get",
        _api("curation_pid_src_second"),
        expected=only({ADM: 200}),
    ),
    Case(
        "curation API apply, the source reviewer is the second annotator",
        "post",
        _api("curation_pid_src_second"),
        BODY,
        only({ADM: 200}),
        headers=lambda w: {"If-Match": f'"{w.curation_version_src_second}"'},
    ),
    Case(
        "curation API, the source reviewer edited the first document last",
        "get",
        _api("curation_pid_src_editor"),
        expected=only({ADM: 200}),
    ),
    Case(
        "curation API, the annotator is the second annotator",
        "get",
        _api("curation_pid_ann_second"),
        expected=CURATORS_API,
    ),
    Case(
        "curation API, no second annotation",
        "get",
        _api("curation_pid_single"),
        expected=only({ADM: 404, SRC: 404}),
    ),
    Case("curation API PUT", "put", _api("curation_pid"), BODY, only({ADM: 405, SRC: 405})),
    Case(
        "curation API unknown problem",
        "get",
        "/api/parents/no-such-problem/passes/1/curation/",
        expected=only({ADM: 404, SRC: 404}),
    ),
    Case(
        "curation page unknown problem",
        "get",
        "/problems/no-such-problem/passes/1/curate/",
        expected=statuses(403, admin=404, source_reviewer=404, anonymous=302),
        fmt=None,
    ),
]


def _double(pid: str, source: Any, *, first_editor: Any, second: Any, sample: Any) -> tuple[Any, Any]:
    parent = ParentProblemFactory(problem_id=pid, source=source)
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    doc = PassDocumentFactory(
        parent=parent,
        pass_no=1,
        document={"problem_id": pid, "visual_nodes": [_region([100, 100, 300, 300])], "ambiguities": []},
        updated_by=first_editor,
        status="submitted",
    )
    second_annotation = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=second)
    document = {"problem_id": pid, "visual_nodes": [_region([110, 100, 310, 300])], "ambiguities": []}
    IndependentPassDocument.objects.create(
        second=second_annotation,
        pass_no=1,
        document=document,
        document_sha256=digest(document),
        status="submitted",
        updated_by=second,
    )
    return parent, doc


def populate(world: World, users: dict[str, Any]) -> None:
    source = SourceFactory(name="matrix-curation")
    first = make_user(type(users[ANN]), "matrix_cur_first", "annotator")
    second = make_user(type(users[ANN]), "matrix_cur_second", "annotator")
    sample = DoubleAnnotationSample.objects.create(source=source, count=5, created_by=users[ADM])
    parent, doc = _double("cur-mx-a", source, first_editor=first, second=second, sample=sample)
    world.curation_pid, world.curation_version = parent.problem_id, doc.version
    world.curation_id = Curation.objects.create(
        parent=parent,
        pass_no=1,
        first_sha256=doc.document_sha256,
        second_sha256="0" * 64,
        result_sha256=doc.document_sha256,
        curator=users[SRC],
    ).pk
    parent, doc = _double("cur-mx-b", source, first_editor=first, second=users[SRC], sample=sample)
    world.curation_pid_src_second, world.curation_version_src_second = parent.problem_id, doc.version
    world.curation_id_src_second = Curation.objects.create(
        parent=parent,
        pass_no=1,
        first_sha256=doc.document_sha256,
        second_sha256="0" * 64,
        result_sha256=doc.document_sha256,
        curator=users[ADM],
    ).pk
    parent, _ = _double("cur-mx-c", source, first_editor=users[SRC], second=second, sample=sample)
    world.curation_pid_src_editor = parent.problem_id
    parent, _ = _double("cur-mx-e", source, first_editor=first, second=users[ANN], sample=sample)
    world.curation_pid_ann_second = parent.problem_id
    single = ParentProblemFactory(problem_id="cur-mx-single", source=source)
    PassDocumentFactory(parent=single, pass_no=1, updated_by=first)
    world.curation_pid_single = single.problem_id
