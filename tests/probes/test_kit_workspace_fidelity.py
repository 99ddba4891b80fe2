"""A Kit workspace compiles here as in the Kit, probe for probe (issue 26 item 1).

The workspace is the generated one (40 parents, seed 2027) with one edit the Kit accepts: the last stem mention
of role ``entity`` that a ``refers_to`` binding starts from gets occurrence 7 (its quote occurs once). The
expected values are what the Kit's own converter printed for that workspace (``convert.py native-draft``, run by
hand from ``../shared/reference/kit``): the parent's T02-single group is blocked with
REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED, its T03-image and T03-text probes are emitted, and every probe's
split is the Kit's. Before the fix the Pass 4 document imported as a draft (the validator called the
occurrence an issue), so the parent compiled nothing and four probes of other parents changed split.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from annotation.demo import generate_workspace
from annotation.importers import import_kit_workspace
from annotation.models import PassDocument
from probes.models import CompileIssue, Probe
from probes.services import compile_run_create, compile_run_execute
from tests.kit_workspace import rewrite_pass

pytestmark = pytest.mark.django_db

PARENT = "demo_2027_00006"

# convert.py native-draft on that workspace: catalog.PRIVATE.json and membership.json
KIT_BLOCKED = {
    "task_id": "T02",
    "code": "REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED",
    "reasons": ["REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED"],
    "scope": ["b010"],
    "group_id": "NG-301f2e1c83561c0ef62603dea2656e6a5f463cfa5188fced623977b93e92c2a4",
}
KIT_PARENT_PROBES = [
    (
        "PAQ-1cc31426e8933da6cdea3cf2f53c15af0410c8e02ceb766fd21f78b267b552e5",
        "T03-text",
        "development_reserved",
    ),
    (
        "PAQ-8f4e23e6024918fc03a6e764dabfe3baea8da7faa6d4278fe2c14ce1f09cd88d",
        "T03-image",
        "development_reserved",
    ),
]
KIT_SPLITS = {"development_reserved": 104, "candidate_unassigned_not_release": 65}
KIT_INTERFACES = {"T02-single": 51, "T03-image": 73, "T03-text": 45}
# SHA-256 of the compact JSON of the sorted [logical_probe_id, interface, split] rows of all 169 probes
KIT_PROBES_SHA256 = "f61ebfb2ec141f36637a72643d15ce157a9f54ff01930fb28a05545fd04cffa9"


def _occurrence_past_its_quote(document: dict) -> None:
    starts = {b["from_id"] for b in document["bindings"] if b["type"] == "refers_to"}
    mention = [
        m
        for m in document["text_mentions"]
        if m["section"] == "stem" and m["role"] == "entity" and m["id"] in starts
    ][-1]
    assert (mention["id"], mention["quote"], mention["occurrence"]) == ("m003", "Object P", 1)
    mention["occurrence"] = 7


def test_the_workspace_compiles_as_in_the_kit(tmp_path):
    ws = tmp_path / "ws"
    generate_workspace(ws, count=40, seed=2027)
    rewrite_pass(ws, PARENT, 4, _occurrence_past_its_quote)
    report = import_kit_workspace(workspace=ws, actor=None)
    assert not report.warnings, report.warnings

    # the Kit's source validation accepts the document, so its approval is imported
    pass4 = PassDocument.objects.get(parent__problem_id=PARENT, pass_no=4)
    assert pass4.status == PassDocument.Status.APPROVED
    assert pass4.document["text_mentions"][2]["occurrence"] == 7

    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)

    # the T02-single group is blocked with the Kit's code, scope and group id; nothing else is
    issues = [
        {"task_id": i.task_id, "code": i.code, "reasons": i.reasons, "scope": i.scope, "group_id": i.group_id}
        for i in CompileIssue.objects.filter(run=run)
    ]
    assert issues == [KIT_BLOCKED]
    # the parent still emits its T03-image and T03-text probes, with the Kit's ids and splits
    parent_probes = Probe.objects.filter(parent__problem_id=PARENT)
    assert sorted(parent_probes.values_list("logical_probe_id", "interface", "split")) == KIT_PARENT_PROBES
    # every probe of the workspace, and its split, is the Kit's
    rows = sorted(Probe.objects.values_list("logical_probe_id", "interface", "split"))
    assert Counter(split for *_, split in rows) == KIT_SPLITS
    assert Counter(interface for _, interface, _ in rows) == KIT_INTERFACES
    compact = json.dumps([list(row) for row in rows], separators=(",", ":")).encode()
    assert hashlib.sha256(compact).hexdigest() == KIT_PROBES_SHA256
