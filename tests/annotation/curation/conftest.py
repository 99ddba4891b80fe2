"""A double-annotated problem for the curation tests: the generated demo problem 2027/3 (a circuit), annotated
by ``first`` (passes 1–3, submitted) and independently by ``second``, whose Pass 1 shifts the battery's box, misses
the "R2" label and adds a region of its own (its Pass 2 follows its own regions)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from annotation.demo.generator import generate_problem
from annotation.models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from annotation.services import pass_document_save, pass_document_submit
from kit.canonical import digest
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, ProblemImageFactory, SourceFactory

EXTRA_REGION = {
    "id": "v010",
    "type": "text_glyph",
    "subtype": "label",
    "text": "I",
    "image_id": "img_0",
    "bbox_1000": [600, 100, 640, 140],
    "keypoints_1000": [],
    "center_1000": [-1, -1],
    "radius_1000": -1,
    "confidence": "high",
}


def _rename(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _rename(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, mapping) for v in value]
    return mapping.get(value, value) if isinstance(value, str) else value


def second_passes(first: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The second annotator's passes 1–2 (see the module docstring)."""
    pass1 = copy.deepcopy(first[0])
    nodes = pass1["visual_nodes"]
    nodes[0]["bbox_1000"] = [135, 475, 200, 516]  # the battery, 6 units to the right
    nodes[:] = [n for n in nodes if n["id"] != "v009"]  # no "R2" label
    nodes[-1]["id"] = "v009"  # the wire: v010 → v009
    nodes.append(copy.deepcopy(EXTRA_REGION))
    pass2 = copy.deepcopy(first[1])
    for node in pass2["physical_nodes"]:
        node["visual_anchor_ids"] = [v for v in node["visual_anchor_ids"] if v != "v009"]
    pass2["bindings"] = [b for b in pass2["bindings"] if b["from_id"] != "v009"]
    pass2 = _rename(pass2, {"v010": "v009"})
    for i, b in enumerate(pass2["bindings"], start=1):
        b["id"] = f"b{i:03d}"
    return [pass1, pass2]


def build(*, first: Any, second: Any) -> dict[str, Any]:
    """The problem, ``first``'s submitted passes 1–3 and ``second``'s independent passes 1–2 (users given, so the
    browser test can pass users that log in with a password)."""
    gen = generate_problem(seed=2027, index=3)
    segments = gen.manifest_row["segments"]
    source = SourceFactory(name="curation-src")
    parent = ParentProblemFactory(
        problem_id=gen.problem_id,
        source=source,
        stem=segments["stem"],
        query=segments["query"],
        domain="electromagnetism",
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    docs = {}
    for pass_no, document in enumerate(gen.passes[:3], start=1):
        doc = pass_document_save(
            parent=parent, pass_no=pass_no, document=document, actor=first, expected_version=None
        )
        docs[pass_no] = pass_document_submit(doc=doc, actor=first)
    sample = DoubleAnnotationSample.objects.create(source=source, count=1)
    second_annotation = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=second)
    seconds = {}
    for pass_no, document in enumerate(second_passes(gen.passes), start=1):
        seconds[pass_no] = IndependentPassDocument.objects.create(
            second=second_annotation,
            pass_no=pass_no,
            document=document,
            document_sha256=digest(document),
            status=IndependentPassDocument.Status.SUBMITTED,
            updated_by=second,
        )
    return {
        "gen": gen,
        "parent": parent,
        "docs": docs,
        "seconds": seconds,
        "second_annotation": second_annotation,
    }


@pytest.fixture
def curation_world(db, django_user_model) -> dict[str, Any]:
    users = {
        "first": make_user(django_user_model, "cur_first", "annotator"),
        "second": make_user(django_user_model, "cur_second", "annotator"),
        "curator": make_user(django_user_model, "cur_reviewer", "source_reviewer"),
        "approver": make_user(django_user_model, "cur_approver", "source_reviewer"),
        "admin": make_user(django_user_model, "cur_admin", "admin"),
    }
    return {**users, **build(first=users["first"], second=users["second"])}
