"""Matrix rows for OCR runs and proposals (annotation.ocr): the API and the source-run page."""

from __future__ import annotations

from typing import Any

from annotation.models import OcrProposal, OcrRun
from annotation.ocr.proposals import ENGINE, PIPELINE_VERSION, OcrOptions
from tests.endpoint_matrix import ADM, ANN, ANON, SRC, Case, World, only
from tests.factories import ParentProblemFactory, ProblemImageFactory, SourceFactory

PASS1_EDITORS_QUEUE = only({ANN: 202, ADM: 202})
PASS1_EDITORS = only({ANN: 200, ADM: 200})
PASS1_READERS = only({ANN: 200, SRC: 200, ADM: 200})

CASES: list[Case] = [
    Case(
        "ocr run for a problem",
        "post",
        lambda w: f"/api/parents/{w.ocr_pid}/ocr-runs/",
        {},
        PASS1_EDITORS_QUEUE,
    ),
    Case(
        "ocr run for a source",
        "post",
        lambda w: f"/api/sources/{w.ocr_source_id}/ocr-runs/",
        {},
        only({ADM: 202}),
    ),
    Case("ocr run status", "get", lambda w: f"/api/ocr-runs/{w.ocr_run_id}/", expected=PASS1_READERS),
    Case(
        "ocr proposals", "get", lambda w: f"/api/parents/{w.ocr_pid}/ocr-proposals/", expected=PASS1_READERS
    ),
    Case(
        "ocr proposals decide",
        "post",
        lambda w: f"/api/parents/{w.ocr_pid}/ocr-proposals/decide/",
        lambda w: {
            "expected_version": 0,
            "decisions": [{"proposal_id": w.ocr_proposal_id, "action": "accept"}],
        },
        PASS1_EDITORS,
    ),
    Case("ocr runs page", "get", "/ocr/runs/", expected=only({ADM: 200, ANON: 302}), fmt=None),
    Case(
        "ocr runs page starts a source run",
        "post",
        "/ocr/runs/",
        lambda w: {"source_id": str(w.ocr_source_id)},
        only({ADM: 302, ANON: 302}),
        fmt=None,
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    source = SourceFactory(name="matrix-ocr-source")
    parent = ParentProblemFactory(problem_id="prob_ocr", source=source)
    image = ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    options = {"preprocessing": OcrOptions().as_dict(), "engine": ENGINE, "pipeline": PIPELINE_VERSION}
    run = OcrRun.objects.create(
        parent=parent, status=OcrRun.Status.DONE, options=options, total=1, done=1, created_by=users[ANN]
    )
    proposal = OcrProposal.objects.create(
        run=run, parent=parent, image=image, bbox_1000=[100, 100, 200, 160], text="5.0 kg", confidence=91.0
    )
    world.ocr_pid = parent.problem_id
    world.ocr_source_id = source.pk
    world.ocr_run_id = run.pk
    world.ocr_proposal_id = proposal.pk
