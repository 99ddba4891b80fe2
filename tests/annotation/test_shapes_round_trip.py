"""Every Kit shape round-trips (issue 28 item 1): a Kit workspace whose Pass 1 (and Pass 4) holds a point, line,
arrow, polyline, curve, circle, arc or angle mark imports with its approval, the stored node is the file's node,
the pass API hands it back unchanged, the stored document serializes to the Kit file's bytes, the workspace finds
no issue in it, and the compiler still locates the node by its explicit bbox_1000 alone (Kit §2.6)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem, PassDocument
from annotation.selectors import pass_validation_issues
from kit.canonical import write_json_bytes
from kit.passes.shapes import derived_bbox, shape_of
from probes.compiler.source_index import build_source_index
from probes.selectors import parent_source_for
from tests.kit_workspace import rewrite_pass

from .test_importers import PID, make_kit_workspace

pytestmark = pytest.mark.django_db
W, H = 320, 200  # the image of make_kit_workspace


def shape_node(node_type: str, **fields) -> dict:
    node = {
        "id": "v002",
        "type": node_type,
        "subtype": "",
        "text": "",
        "image_id": "img_0",
        "bbox_1000": [0, 0, 0, 0],
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "medium",
    } | fields
    node["bbox_1000"] = derived_bbox(node, W, H)
    return node


NODES = {
    "point": shape_node("point_mark", keypoints_1000=[[412, 377]]),
    "line": shape_node("line_segment", keypoints_1000=[[100, 900], [512, 901]]),
    "arrow": shape_node("arrow", subtype="force", keypoints_1000=[[520, 330], [521, 807]]),
    "polyline": shape_node("polyline", keypoints_1000=[[600, 200], [700, 310], [800, 205], [905, 333]]),
    "curve": shape_node("curve", keypoints_1000=[[150, 150], [250, 81], [350, 149]]),
    "circle": shape_node("circle", subtype="pulley", center_1000=[751, 648], radius_1000=97),
    "arc": shape_node(
        "arc", keypoints_1000=[[611, 500], [500, 640]], center_1000=[500, 500], radius_1000=111
    ),
    "angle": shape_node("angle_mark", keypoints_1000=[[400, 600], [480, 600], [440, 500]]),
}


@pytest.mark.parametrize("shape", list(NODES))
def test_a_kit_shape_imports_serializes_and_compiles_unchanged(tmp_path, shape, annotator):
    node = NODES[shape]
    assert shape_of(node) == shape
    ws = make_kit_workspace(tmp_path)
    pass1 = rewrite_pass(ws, PID, 1, lambda d: d["visual_nodes"].append(node))
    rewrite_pass(ws, PID, 4, lambda d: d["visual_nodes"].append(node))
    file_bytes = (ws / "passes" / "pass1" / f"{PID}.json").read_bytes()

    report = import_kit_workspace(workspace=ws)
    assert report.status == "succeeded", report.as_dict()
    parent = ParentProblem.objects.get(problem_id=PID)
    stored = PassDocument.objects.get(parent=parent, pass_no=1)
    assert stored.status == PassDocument.Status.APPROVED  # the Kit's approval holds: nothing changed
    assert stored.document == pass1
    assert stored.document["visual_nodes"][1] == node
    assert write_json_bytes(stored.document) == file_bytes  # serialized as the Kit writes it: byte for byte
    pass4 = PassDocument.objects.get(parent=parent, pass_no=4)
    assert pass4.document["visual_nodes"][1] == node

    client = APIClient()
    client.force_authenticate(annotator)
    response = client.get(f"/api/parents/{PID}/passes/1/")
    assert response.status_code == 200
    assert response.json()["document"]["visual_nodes"][1] == node
    # the workspace (stricter than the Kit) finds nothing to fix in a drawn shape
    assert pass_validation_issues(parent=parent, pass_no=1, document=stored.document) == []

    index = build_source_index(parent_source_for(parent))
    origins = {key.rsplit(":", 2)[-1]: origin for key, origin in index.anchor_origins.items()}
    assert origins["v002"]["locator"] == {
        "kind": "visual",
        "image_id": "img_0",
        "geometry": {"type": "bbox", "bbox_1000": node["bbox_1000"]},
    }
