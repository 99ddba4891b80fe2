from __future__ import annotations

from typing import Any

import pytest

from annotation.double.services import double_sample_request
from annotation.services import pass_document_save
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, ProblemImageFactory, SourceFactory

FIRST_SECRET = "FIRSTSECRET42"  # a text only the first annotation holds


def first_pass1(problem_id: str) -> dict[str, Any]:
    return {
        "problem_id": problem_id,
        "visual_nodes": [
            {
                "id": "v001",
                "type": "text_glyph",
                "subtype": "",
                "text": FIRST_SECRET,
                "image_id": "img_1",
                "bbox_1000": [100, 100, 200, 200],
                "keypoints_1000": [],
                "center_1000": [-1, -1],
                "radius_1000": -1,
                "confidence": "high",
            }
        ],
        "ambiguities": [],
    }


@pytest.fixture
def double(db, django_user_model) -> dict[str, Any]:
    """A source of three parents, all double-annotated by ``second``; ``first`` annotated dbl_a's Pass 1 (with a
    text only the first annotation holds)."""
    source = SourceFactory(name="double-src")
    first = make_user(django_user_model, "first_ann", "annotator")
    second = make_user(django_user_model, "second_ann", "annotator")
    other = make_user(django_user_model, "other_ann", "annotator")
    reviewer = make_user(django_user_model, "dbl_reviewer", "source_reviewer")
    admin = make_user(django_user_model, "dbl_admin", "admin")
    parents = [ParentProblemFactory(problem_id=f"dbl_{x}", source=source) for x in "abc"]
    for parent in parents:
        ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1)
    doc = pass_document_save(
        parent=parents[0], pass_no=1, document=first_pass1("dbl_a"), actor=first, expected_version=None
    )
    sample = double_sample_request(source=source, annotator_ids=[second.pk], actor=admin, count=3, seed=7)
    return {
        "source": source,
        "first": first,
        "second": second,
        "other": other,
        "reviewer": reviewer,
        "admin": admin,
        "parents": parents,
        "doc": doc,
        "sample": sample,
    }
