"""Every endpoint × every role → expected status code, in one table.

Add a row to ``CASES`` for each new endpoint. ``url`` and ``body``/``headers`` may be callables of
the ``World`` built below, so rows can point at objects that exist only inside the test database.
A role left out of ``expected`` is simply not checked for that row.

"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotation.models import ImportJob, PassDocument
from physalign_site.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

ANON, ANN, SRC, PRB, ADJ, ADM, NOROLE = (
    "anonymous", "annotator", "source_reviewer", "probe_reviewer", "adjudicator", "admin", "no_role",
)
ROLES = (ANON, ANN, SRC, PRB, ADJ, ADM, NOROLE)


def statuses(default: int, **overrides: int) -> dict[str, int]:
    """Every role → ``default``, except the overrides (``anonymous=403`` …)."""
    return {role: overrides.get(role, default) for role in ROLES}


def only(allowed: dict[str, int], *, others: int = 403) -> dict[str, int]:
    return {role: allowed.get(role, others) for role in ROLES}


@dataclass
class World:
    source_id: int
    pid: str          # parent with one image; pass 1 submitted by the annotator
    pid_plain: str    # parent without images; pass 1 is a valid draft
    pid_done: str     # passes 1–4 approved and fresh; pass 5 exists
    import_job_id: int
    pass1_sha: str


@dataclass
class Case:
    name: str
    method: str
    url: Callable[[World], str] | str
    body: Callable[[World], Any] | Any = None
    expected: dict[str, int] = field(default_factory=dict)
    headers: Callable[[World], dict[str, str]] | dict[str, str] | None = None
    fmt: str | None = "json"


def _v(value: Any, world: World) -> Any:
    return value(world) if callable(value) else value


def _pass1(pid: str) -> dict[str, Any]:
    return {"problem_id": pid, "visual_nodes": [], "ambiguities": []}


GLYPH_NODE = {"id": "v001", "type": "text_glyph", "subtype": "", "text": "m", "image_id": "img_0",
              "bbox_1000": [70, 200, 115, 280], "keypoints_1000": [], "center_1000": [-1, -1],
              "radius_1000": -1, "confidence": "high"}

API_READERS = statuses(200, anonymous=403, no_role=403)
PASS_READERS = only({ANN: 200, SRC: 200, ADM: 200})
PASS_WRITERS = only({ANN: 200, ADM: 200})
REVIEWERS = only({SRC: 200, ADM: 200})
IMPORTERS = only({ANN: 200, ADM: 200})

CASES: list[Case] = [
    # --- site-wide API ---
    Case("me", "get", "/api/me/", expected=statuses(200, anonymous=403)),
    Case("schema", "get", "/api/schema/", expected=statuses(200, anonymous=403)),
    Case("docs", "get", "/api/docs/", expected=statuses(200, anonymous=403)),
    Case("token bad credentials", "post", "/api/auth/token/", {"username": "nobody", "password": "wrong"},
         expected=statuses(400)),
    # --- HTML pages ---
    Case("home", "get", "/", expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403}),
    Case("login page", "get", "/accounts/login/", expected=statuses(302, anonymous=200)),
    Case("problem page", "get", lambda w: f"/problems/{w.pid}/",
         expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403}),
    Case("problem image file", "get", lambda w: f"/problems/{w.pid}/images/img_0",
         expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403}),
    Case("imports page", "get", "/imports/", expected=only({ANN: 200, ADM: 200, ANON: 302})),
    Case("import job page", "get", lambda w: f"/imports/{w.import_job_id}/",
         expected=only({ANN: 200, ADM: 200, ANON: 302})),
    # --- sources ---
    Case("sources list", "get", "/api/sources/", expected=API_READERS),
    Case("sources create", "post", "/api/sources/", {"name": "new-source", "license": "MIT"},
         expected=only({ADM: 201})),
    Case("source detail", "get", lambda w: f"/api/sources/{w.source_id}/", expected=API_READERS),
    # --- parents ---
    Case("parents list", "get", "/api/parents/", expected=API_READERS),
    Case("parents list filtered", "get", "/api/parents/?language=en&search=block&ordering=-problem_id",
         expected=API_READERS),
    Case("parent detail", "get", lambda w: f"/api/parents/{w.pid}/", expected=API_READERS),
    Case("parent detail missing", "get", "/api/parents/no-such-problem/",
         expected=statuses(404, anonymous=403, no_role=403)),
    # --- passes ---
    Case("passes summary", "get", lambda w: f"/api/parents/{w.pid}/passes/", expected=PASS_READERS),
    Case("pass 1 read", "get", lambda w: f"/api/parents/{w.pid}/passes/1/", expected=PASS_READERS),
    Case("pass 2 read (not created)", "get", lambda w: f"/api/parents/{w.pid}/passes/2/",
         expected=only({ANN: 404, SRC: 404, ADM: 404})),
    Case("pass 1 write", "put", lambda w: f"/api/parents/{w.pid}/passes/1/",
         lambda w: {"document": _pass1(w.pid)}, headers={"If-Match": '"1"'},
         expected=PASS_WRITERS),
    Case("pass 1 submit", "post", lambda w: f"/api/parents/{w.pid_plain}/passes/1/submit/",
         expected=PASS_WRITERS),
    Case("pass 1 approve", "post", lambda w: f"/api/parents/{w.pid}/passes/1/approve/",
         lambda w: {"document_sha256": w.pass1_sha, "note": "ok"}, expected=REVIEWERS),
    Case("pass 1 reject", "post", lambda w: f"/api/parents/{w.pid}/passes/1/reject/",
         lambda w: {"document_sha256": w.pass1_sha, "note": "bbox too loose"}, expected=REVIEWERS),
    Case("pass 5 read while locked", "get", lambda w: f"/api/parents/{w.pid}/passes/5/",
         expected=only({ANN: 409, ADM: 409})),
    Case("pass 5 write while locked", "put", lambda w: f"/api/parents/{w.pid}/passes/5/",
         lambda w: {"document": {"problem_id": w.pid, "solution_steps": []}}, expected=only({ANN: 409, ADM: 409})),
    Case("pass 5 read when open", "get", lambda w: f"/api/parents/{w.pid_done}/passes/5/",
         expected=only({ANN: 200, ADM: 200})),
    Case("pass 6 does not exist", "get", lambda w: f"/api/parents/{w.pid}/passes/6/", expected=statuses(404)),
    # --- events ---
    Case("events", "get", "/api/events/", expected=only({ADM: 200})),
    Case("events filtered", "get", "/api/events/?object_type=annotation.passdocument&object_id=1",
         expected=only({ADM: 200})),
    # --- imports ---
    Case("import without file", "post", "/api/imports/", {"kind": "problems"}, fmt="multipart",
         expected=only({ANN: 400, ADM: 400})),
    Case("import job status", "get", lambda w: f"/api/imports/{w.import_job_id}/", expected=IMPORTERS),
]


PARAMS = [
    pytest.param(case, role, id=f"{case.method.upper()} {case.name} [{role}]")
    for case in CASES
    for role in ROLES
    if role in case.expected
]


@pytest.fixture
def world(role_users) -> World:
    annotator, reviewer = role_users[ANN], role_users[SRC]
    source = SourceFactory(name="matrix-source")
    parent = ParentProblemFactory(problem_id="prob_matrix", source=source)
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    pass1 = PassDocumentFactory(parent=parent, pass_no=1, status=PassDocument.Status.SUBMITTED,
                                updated_by=annotator,
                                document={**_pass1(parent.problem_id), "visual_nodes": [GLYPH_NODE]})
    plain = ParentProblemFactory(problem_id="prob_plain", source=source)
    PassDocumentFactory(parent=plain, pass_no=1, updated_by=annotator, document=_pass1(plain.problem_id))
    done = ParentProblemFactory(problem_id="prob_done", source=source, status="annotated")
    for pass_no in (1, 2, 3, 4):
        doc = {"problem_id": done.problem_id, "pass": pass_no}
        PassDocumentFactory(parent=done, pass_no=pass_no, document=doc, status=PassDocument.Status.APPROVED,
                            approved_sha256=digest(doc), approved_by=reviewer, updated_by=annotator)
    PassDocumentFactory(parent=done, pass_no=5, document={"problem_id": done.problem_id, "solution_steps": []})
    job = ImportJob.objects.create(kind=ImportJob.Kind.PROBLEMS, created_by=annotator)
    return World(source_id=source.pk, pid=parent.problem_id, pid_plain=plain.problem_id,
                 pid_done=done.problem_id, import_job_id=job.pk, pass1_sha=pass1.document_sha256)


@pytest.fixture
def users(role_users, django_user_model) -> dict[str, Any]:
    everyone: dict[str, Any] = dict(role_users)
    everyone[ANON] = None
    everyone[NOROLE] = django_user_model.objects.create_user(username="user_no_role", password="pw-none")
    assert not Group.objects.filter(user=everyone[NOROLE]).exists()
    return everyone


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "role"), PARAMS)
def test_endpoint_role_matrix(case: Case, role: str, world: World, users: dict[str, Any]) -> None:
    client = APIClient()
    if users[role] is not None:
        client.force_login(users[role])
    url = _v(case.url, world)
    kwargs: dict[str, Any] = {}
    body = _v(case.body, world)
    if body is not None or case.method in ("post", "put", "patch"):
        kwargs["data"] = body if body is not None else {}
        if case.fmt:
            kwargs["format"] = case.fmt
    headers = _v(case.headers, world)
    if headers:
        kwargs["headers"] = headers
    response = getattr(client, case.method)(url, **kwargs)
    expected = case.expected[role]
    detail = getattr(response, "data", None) if response.status_code != expected else None
    assert response.status_code == expected, f"{case.method.upper()} {url} as {role}: {detail!r}"
    if expected == 302 and role == ANON:
        assert "/accounts/login/" in response["Location"]
