"""Matrix rows for sources, problems, pass documents, events, imports and site-wide pages."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.files.base import ContentFile
from django.db.models import F

from annotation.models import ImportJob, PassDocument, WorkspaceExport
from annotation.services import pass_document_save
from kit.canonical import digest
from tests.endpoint_matrix import ADJ, ADM, ANN, ANON, NOROLE, PRB, SRC, Case, World, only, statuses
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory


def _pass1(pid: str) -> dict[str, Any]:
    return {"problem_id": pid, "visual_nodes": [], "ambiguities": []}


GLYPH_NODE = {
    "id": "v001",
    "type": "text_glyph",
    "subtype": "",
    "text": "m",
    "image_id": "img_0",
    "bbox_1000": [70, 200, 115, 280],
    "keypoints_1000": [],
    "center_1000": [-1, -1],
    "radius_1000": -1,
    "confidence": "high",
}

API_READERS = statuses(200, anonymous=403, no_role=403)
PASS_READERS = only({ANN: 200, SRC: 200, ADM: 200})
PASS_WRITERS = only({ANN: 200, ADM: 200})
REVIEWERS = only({SRC: 200, ADM: 200})
IMPORTERS = only({ANN: 200, ADM: 200})
PAGE_READERS = only({ANN: 200, SRC: 200, ADM: 200, ANON: 302})
SECRET_ANSWER, SECRET_SOLUTION = "MATRIX-PARENT-ANSWER-42", "MATRIX-PARENT-SOLUTION-STEPS"

CASES: list[Case] = [
    # --- site-wide API ---
    Case("me", "get", "/api/me/", expected=statuses(200, anonymous=403)),
    Case(
        "token with an unknown token header",
        "post",
        "/api/auth/token/",
        {"username": "nobody", "password": "wrong"},
        headers={"Authorization": "Token not-a-real-token"},
        expected=statuses(401),
    ),
    Case("schema", "get", "/api/schema/", expected=statuses(200, anonymous=403)),
    Case("docs", "get", "/api/docs/", expected=statuses(200, anonymous=302)),  # a page: to the login form
    Case(
        "token bad credentials",
        "post",
        "/api/auth/token/",
        {"username": "nobody", "password": "wrong"},
        expected=statuses(400),
    ),
    # --- HTML pages ---
    # every signed-in user has a home page (one without a role is told to ask an admin for one)
    Case("home", "get", "/", expected=statuses(200, anonymous=302)),
    Case(
        "problem list",
        "get",
        "/problems/",
        expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403},
    ),
    Case("source review queue", "get", "/source-review/", expected=only({SRC: 200, ADM: 200, ANON: 302})),
    Case("login page", "get", "/accounts/login/", expected=statuses(302, anonymous=200)),
    Case(
        "problem page",
        "get",
        lambda w: f"/problems/{w.pid}/",
        expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403},
        fmt=None,
        secrets=lambda w: [SECRET_ANSWER, SECRET_SOLUTION],  # the answer and solution: key holders only
    ),
    Case(
        "problem image file",
        "get",
        lambda w: f"/problems/{w.pid}/images/img_0",
        expected={ANON: 302, ANN: 200, SRC: 200, PRB: 200, ADJ: 200, ADM: 200, NOROLE: 403},
    ),
    Case("imports page", "get", "/imports/", expected=only({ANN: 200, ADM: 200, ANON: 302})),
    Case(
        "import job page",
        "get",
        lambda w: f"/imports/{w.import_job_id}/",
        expected=only({ANN: 200, ADM: 200, ANON: 302}),
    ),
    # --- Kit workspace exports (the zip holds private answers: admins only) ---
    Case(
        "kit workspace exports page", "get", "/exports/kit-workspace/", expected=only({ADM: 200, ANON: 302})
    ),
    Case(
        "kit workspace export page",
        "get",
        lambda w: f"/exports/kit-workspace/{w.workspace_export_id}/",
        expected=only({ADM: 200, ANON: 302}),
    ),
    Case(
        "kit workspace export download",
        "get",
        lambda w: f"/exports/kit-workspace/{w.workspace_export_id}/download",
        expected=only({ADM: 200, ANON: 302}),
    ),
    Case(
        "kit workspace export create (unknown problem)",
        "post",
        "/api/kit-workspace-exports/",
        {"problem_ids": ["no_such_problem"]},
        expected=only({ADM: 400}),
    ),
    Case(
        "kit workspace export status",
        "get",
        lambda w: f"/api/kit-workspace-exports/{w.workspace_export_id}/",
        expected=only({ADM: 200}),
    ),
    Case(
        "kit workspace export zip",
        "get",
        lambda w: f"/api/kit-workspace-exports/{w.workspace_export_id}/download",
        expected=only({ADM: 200}),
    ),
    # --- sources ---
    Case("sources list", "get", "/api/sources/", expected=API_READERS),
    Case(
        "sources create",
        "post",
        "/api/sources/",
        {"name": "new-source", "license": "MIT"},
        expected=only({ADM: 201}),
    ),
    Case("source detail", "get", lambda w: f"/api/sources/{w.source_id}/", expected=API_READERS),
    Case(
        "source detail missing",
        "get",
        "/api/sources/999999/",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    Case(
        "sources list, a bad cursor",
        "get",
        "/api/sources/?cursor=not-a-cursor",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    Case("sources create bad body", "post", "/api/sources/", {"name": ""}, expected=only({ADM: 400})),
    # --- parents ---
    Case("parents list", "get", "/api/parents/", expected=API_READERS),
    Case(
        "parents list filtered",
        "get",
        "/api/parents/?language=en&search=block&ordering=-problem_id",
        expected=API_READERS,
    ),
    Case(
        "parent detail",
        "get",
        lambda w: f"/api/parents/{w.pid}/",
        expected=API_READERS,
        secrets=lambda w: [SECRET_ANSWER, SECRET_SOLUTION],
    ),
    Case(
        "parents list, an unknown language",
        "get",
        "/api/parents/?language=fr",
        expected=statuses(400, anonymous=403, no_role=403),
    ),
    Case(
        "parents list, a bad cursor",
        "get",
        "/api/parents/?cursor=not-a-cursor",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    Case(
        "parent detail missing",
        "get",
        "/api/parents/no-such-problem/",
        expected=statuses(404, anonymous=403, no_role=403),
    ),
    # --- passes ---
    Case("passes summary", "get", lambda w: f"/api/parents/{w.pid}/passes/", expected=PASS_READERS),
    Case(
        "passes summary of no such parent",
        "get",
        "/api/parents/no-such-problem/passes/",
        expected=only({ANN: 404, SRC: 404, ADM: 404}),
    ),
    Case("pass 1 read", "get", lambda w: f"/api/parents/{w.pid}/passes/1/", expected=PASS_READERS),
    Case(
        "pass 2 read (not created)",
        "get",
        lambda w: f"/api/parents/{w.pid}/passes/2/",
        expected=only({ANN: 404, SRC: 404, ADM: 404}),
    ),
    Case(
        "pass 1 write",
        "put",
        lambda w: f"/api/parents/{w.pid}/passes/1/",
        lambda w: {"document": _pass1(w.pid)},
        headers={"If-Match": '"1"'},
        expected=PASS_WRITERS,
    ),
    Case(
        "pass 1 submit",
        "post",
        lambda w: f"/api/parents/{w.pid_plain}/passes/1/submit/",
        expected=PASS_WRITERS,
    ),
    Case(
        "pass 1 approve",
        "post",
        lambda w: f"/api/parents/{w.pid}/passes/1/approve/",
        lambda w: {"document_sha256": w.pass1_sha, "note": "ok"},
        expected=REVIEWERS,
    ),
    Case(
        "pass 1 reject",
        "post",
        lambda w: f"/api/parents/{w.pid}/passes/1/reject/",
        lambda w: {"document_sha256": w.pass1_sha, "note": "bbox too loose"},
        expected=REVIEWERS,
    ),
    Case(
        "pass 5 read while locked",
        "get",
        lambda w: f"/api/parents/{w.pid}/passes/5/",
        expected=only({ANN: 409, ADM: 409}),
    ),
    Case(
        "pass 5 write while locked",
        "put",
        lambda w: f"/api/parents/{w.pid}/passes/5/",
        lambda w: {"document": {"problem_id": w.pid, "solution_steps": []}},
        expected=only({ANN: 409, ADM: 409}),
    ),
    Case(
        "pass 5 read when open",
        "get",
        lambda w: f"/api/parents/{w.pid_done}/passes/5/",
        expected=only({ANN: 200, ADM: 200}),
    ),
    Case("pass 6 does not exist", "get", lambda w: f"/api/parents/{w.pid}/passes/6/", expected=statuses(404)),
    # --- events ---
    Case("events", "get", "/api/events/", expected=only({ADM: 200})),
    Case("events, a bad cursor", "get", "/api/events/?cursor=not-a-cursor", expected=only({ADM: 404})),
    Case(
        "events filtered",
        "get",
        "/api/events/?object_type=annotation.passdocument&object_id=1",
        expected=only({ADM: 200}),
    ),
    # --- imports ---
    Case(
        "import without file",
        "post",
        "/api/imports/",
        {"kind": "problems"},
        fmt="multipart",
        expected=only({ANN: 400, ADM: 400}),
    ),
    Case("import job status", "get", lambda w: f"/api/imports/{w.import_job_id}/", expected=IMPORTERS),
    Case("import job missing", "get", "/api/imports/999999/", expected=only({ANN: 404, ADM: 404})),
    # --- workspace pages (HTML) ---
    Case(
        "workspace pass 1", "get", lambda w: f"/problems/{w.pid}/passes/1/", expected=PAGE_READERS, fmt=None
    ),
    Case(
        "workspace pass 2 (not created)",
        "get",
        lambda w: f"/problems/{w.pid}/passes/2/",
        expected=PAGE_READERS,
        fmt=None,
    ),
    Case(
        "workspace pass 5 while locked",
        "get",
        lambda w: f"/problems/{w.pid}/passes/5/",
        expected=only({ANN: 409, ADM: 409, ANON: 302}),
        fmt=None,
    ),
    Case(
        "workspace pass 5 when open",
        "get",
        lambda w: f"/problems/{w.pid_done}/passes/5/",
        expected=only({ANN: 200, ADM: 200, ANON: 302}),
        fmt=None,
    ),
    Case(
        "workspace pass 6 does not exist",
        "get",
        lambda w: f"/problems/{w.pid}/passes/6/",
        expected=statuses(404),
        fmt=None,
    ),
    Case(
        "review page", "get", lambda w: f"/problems/{w.pid}/passes/1/review/", expected=PAGE_READERS, fmt=None
    ),
    Case(
        "review page (no document)",
        "get",
        lambda w: f"/problems/{w.pid}/passes/2/review/",
        expected=only({ANN: 404, SRC: 404, ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "review approve",
        "post",
        lambda w: f"/problems/{w.pid}/passes/1/review/",
        lambda w: {"decision": "approve", "document_sha256": w.pass1_sha, "note": "ok"},
        expected=only({SRC: 302, ADM: 302, ANN: 403, ANON: 302}),
        fmt="multipart",
    ),
    Case(
        "review reject without note",
        "post",
        lambda w: f"/problems/{w.pid}/passes/1/review/",
        lambda w: {"decision": "reject", "document_sha256": w.pass1_sha, "note": ""},
        expected=only({SRC: 400, ADM: 400, ANN: 403, ANON: 302}),
        fmt="multipart",
    ),
    Case(
        "history page",
        "get",
        lambda w: f"/problems/{w.pid_hist}/passes/1/history/",
        expected=PAGE_READERS,
        fmt=None,
    ),
    Case(
        "history page diff",
        "get",
        lambda w: f"/problems/{w.pid_hist}/passes/1/history/?from=1&to=2",
        expected=PAGE_READERS,
        fmt=None,
    ),
    Case(
        "history page (no document)",
        "get",
        lambda w: f"/problems/{w.pid}/passes/3/history/",
        expected=only({ANN: 404, SRC: 404, ADM: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "revert (page form)",
        "post",
        lambda w: f"/problems/{w.pid_hist}/passes/1/history/1/revert/",
        {"expected_version": "2"},
        expected=only({ANN: 302, ADM: 302, ANON: 302}),
        fmt="multipart",
    ),
    # --- workspace API: history, diff, revert ---
    Case(
        "versions list",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/",
        expected=PASS_READERS,
    ),
    Case(
        "version detail",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/1/",
        expected=PASS_READERS,
    ),
    Case(
        "version detail missing",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/99/",
        expected=only({ANN: 404, SRC: 404, ADM: 404}),
    ),
    Case(
        "versions list, a bad cursor",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/?cursor=not-a-cursor",
        expected=only({ANN: 404, SRC: 404, ADM: 404}),
    ),
    Case(
        "versions of a pass without a document",
        "get",
        lambda w: f"/api/parents/{w.pid}/passes/3/versions/",
        expected=only({ANN: 404, SRC: 404, ADM: 404}),
    ),
    Case(
        "versions of pass 5 while locked",
        "get",
        lambda w: f"/api/parents/{w.pid}/passes/5/versions/",
        expected=only({ANN: 409, ADM: 409}),
    ),
    Case(
        "diff",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/diff/?from=1&to=2",
        expected=PASS_READERS,
    ),
    Case(
        "diff without versions",
        "get",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/diff/",
        expected=only({ANN: 400, SRC: 400, ADM: 400}),
    ),
    Case(
        "revert",
        "post",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/1/revert/",
        headers={"If-Match": '"2"'},
        expected=PASS_WRITERS,
    ),
    Case(
        "revert stale version",
        "post",
        lambda w: f"/api/parents/{w.pid_hist}/passes/1/versions/1/revert/",
        headers={"If-Match": '"1"'},
        expected=only({ANN: 409, ADM: 409}),
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    annotator, reviewer = users[ANN], users[SRC]
    source = SourceFactory(name="matrix-source")
    parent = ParentProblemFactory(
        problem_id="prob_matrix", source=source, answer=SECRET_ANSWER, solution=SECRET_SOLUTION
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    pass1 = PassDocumentFactory(
        parent=parent,
        pass_no=1,
        status=PassDocument.Status.SUBMITTED,
        updated_by=annotator,
        document={**_pass1(parent.problem_id), "visual_nodes": [GLYPH_NODE]},
    )
    plain = ParentProblemFactory(problem_id="prob_plain", source=source)
    PassDocumentFactory(parent=plain, pass_no=1, updated_by=annotator, document=_pass1(plain.problem_id))
    done = ParentProblemFactory(problem_id="prob_done", source=source, status="annotated")
    for pass_no in (1, 2, 3, 4):
        doc = {"problem_id": done.problem_id, "pass": pass_no}
        PassDocumentFactory(
            parent=done,
            pass_no=pass_no,
            document=doc,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(doc),
            approved_by=reviewer,
            updated_by=annotator,
        )
    PassDocumentFactory(
        parent=done, pass_no=5, document={"problem_id": done.problem_id, "solution_steps": []}
    )
    hist = ParentProblemFactory(problem_id="prob_hist", source=source)
    ProblemImageFactory(parent=hist, image_id="img_0", ordinal=0)
    first = pass_document_save(
        parent=hist, pass_no=1, document=_pass1(hist.problem_id), actor=annotator, expected_version=None
    )
    hour = timedelta(hours=1)  # v1 saved an hour ago: the next save is a version of its own, not coalesced
    first.versions.update(saved_at=F("saved_at") - hour, last_saved_at=F("last_saved_at") - hour)
    pass_document_save(
        parent=hist,
        pass_no=1,
        document={**_pass1(hist.problem_id), "visual_nodes": [GLYPH_NODE]},
        actor=annotator,
        expected_version=first.version,
    )
    job = ImportJob.objects.create(kind=ImportJob.Kind.PROBLEMS, created_by=annotator)
    export = WorkspaceExport(status=WorkspaceExport.Status.READY, sha256="0" * 64, byte_size=22)
    export.file.save("matrix.zip", ContentFile(b"PK\x05\x06" + bytes(18)), save=False)
    export.save()
    world.workspace_export_id = export.pk
    world.source_id = source.pk
    world.pid = parent.problem_id  # one image; pass 1 submitted by the annotator
    world.pid_plain = plain.problem_id  # no images; pass 1 is a valid draft
    world.pid_done = done.problem_id  # passes 1-4 approved and fresh; pass 5 exists
    world.pid_hist = hist.problem_id  # pass 1 saved twice (versions 1 and 2): history, diff, revert
    world.import_job_id = job.pk
    world.pass1_sha = pass1.document_sha256
