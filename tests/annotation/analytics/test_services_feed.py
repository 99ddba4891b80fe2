"""The analytics read what the services write: every save through the versioned save (coalesced into one
history version or not) is one audit event, and submit and reject are counted for the annotator."""

from __future__ import annotations

import pytest

from annotation.analytics.selectors import Period, annotation_analytics
from annotation.models import PassDocumentVersion
from annotation.services import pass_document_reject, pass_document_save, pass_document_submit
from tests.annotation.analytics.world import DAY, at, minutes
from tests.factories import ParentProblemFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db

GLYPH = {
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


def test_coalesced_autosaves_still_count_one_save_each_and_their_gaps(annotator, source_reviewer):
    parent = ParentProblemFactory(domain="optics")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    empty = {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []}
    glyph = {**empty, "visual_nodes": [GLYPH]}
    doc = None
    for m, document in ((0, empty), (1, glyph), (3, empty), (4.5, glyph)):
        doc = at(
            minutes(m),
            pass_document_save,
            parent=parent,
            pass_no=1,
            document=document,
            actor=annotator,
            expected_version=doc.version if doc else None,
        )
    assert PassDocumentVersion.objects.filter(pass_document=doc).count() == 1  # the history coalesced them
    at(minutes(5), pass_document_submit, doc=doc, actor=annotator)
    at(
        minutes(9),
        pass_document_reject,
        doc=doc,
        actor=source_reviewer,
        document_sha256=doc.document_sha256,
        note="The glyph's box misses the label.",
    )

    data = annotation_analytics(period=Period(DAY, DAY))
    (row,) = data.annotators
    assert (row.username, row.pass_no) == (annotator.username, 1)
    t = row.tally
    assert (t.document_count, t.saves, t.active_seconds, t.submissions, t.rejections) == (1, 4, 270.0, 1, 1)
    assert [(r.annotator, r.reviewer, r.note) for r in data.rejections] == [
        (annotator.username, source_reviewer.username, "The glyph's box misses the label.")
    ]
