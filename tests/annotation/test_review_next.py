"""Source review that flows: "Approve and next" / "Reject and next" take the next pass of the queue the reviewer
came from (its order and filters), never one the reviewer edited last; the queue says how far it is."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import PassDocument
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory

pytestmark = pytest.mark.django_db


def _submitted(problem_id, pass_no, age_hours, editor=None):
    parent = ParentProblemFactory(problem_id=problem_id)
    document = {"problem_id": problem_id, "pass": pass_no}
    doc = PassDocumentFactory(
        parent=parent,
        pass_no=pass_no,
        document=document,
        document_sha256=digest(document),
        status=PassDocument.Status.SUBMITTED,
        updated_by=editor,
    )
    PassDocument.objects.filter(pk=doc.pk).update(updated_at=timezone.now() - timedelta(hours=age_hours))
    return doc


def _decide(client, doc, decision, note="", **filters):
    return client.post(
        f"/problems/{doc.parent.problem_id}/passes/{doc.pass_no}/review/",
        {"decision": decision, "document_sha256": doc.document_sha256, "note": note, **filters},
    )


def test_approve_and_next_follows_the_queues_order_and_filters(client, role_users):
    reviewer = role_users["source_reviewer"]
    oldest = _submitted("rn_a", 1, 30)
    own = _submitted("rn_b", 1, 20, editor=reviewer)  # the reviewer edited it last: never theirs to review
    pass2 = _submitted("rn_c", 2, 10)
    newest = _submitted("rn_d", 1, 5)
    client.force_login(reviewer)

    queue = client.get("/source-review/?pass=1").content.decode()
    assert re.search(
        r'data-testid="queue-progress">0 of 3 submitted passes reviewed under these filters', queue
    )
    assert f'href="/problems/{oldest.parent.problem_id}/passes/1/review/?pass=1"' in queue

    answer = _decide(client, oldest, "approve_next", **{"pass": "1"})
    assert answer.status_code == 302
    assert (
        answer["Location"] == f"/problems/{newest.parent.problem_id}/passes/1/review/?pass=1"
    )  # skips rn_b, rn_c
    answer = _decide(client, newest, "reject_next", note="R2 is not the resistor.", **{"pass": "1"})
    assert answer["Location"] == "/source-review/?pass=1"  # nothing else this reviewer may take
    assert client.get("/source-review/?pass=1").context["progress"] == {"done": 2, "total": 3}
    stored = {d.parent.problem_id: d.status for d in PassDocument.objects.select_related("parent")}
    assert stored == {"rn_a": "approved", "rn_b": "submitted", "rn_c": "submitted", "rn_d": "rejected"}

    # without filters the next one is simply the oldest waiting that the reviewer may take
    pass2_doc = PassDocument.objects.get(pk=pass2.pk)
    assert _decide(client, pass2_doc, "approve")["Location"] == "/problems/rn_c/passes/2/review/"
    assert own.pk  # still waiting for another reviewer


def test_the_next_problem_of_a_pass_is_the_next_by_id_whose_pass_waits_with_a_diagram():
    from annotation.models import ParentProblem
    from annotation.selectors import next_problem_for_pass
    from tests.factories import ProblemImageFactory, png_bytes

    def problem(problem_id, *, image=True, pass1=None, excluded=False):
        parent = ParentProblemFactory(
            problem_id=problem_id,
            status=ParentProblem.Status.EXCLUDED if excluded else ParentProblem.Status.NEW,
        )
        if image:
            ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=png_bytes(20, 20))
        if pass1:
            document = {"problem_id": problem_id}
            PassDocumentFactory(
                parent=parent, pass_no=1, document=document, document_sha256=digest(document), status=pass1
            )
        return parent

    a = problem("np_a")
    problem("np_b", pass1="submitted")  # done for now
    problem("np_c", image=False)  # text only: no annotation work
    problem("np_d", excluded=True)
    e = problem("np_e", pass1="rejected")  # back to the annotator
    assert next_problem_for_pass(after=a, pass_no=1).problem_id == "np_e"
    assert next_problem_for_pass(after=e, pass_no=1).problem_id == "np_a"  # from the start again
    assert next_problem_for_pass(after=e, pass_no=2).problem_id == "np_a"
    assert next_problem_for_pass(after=a, pass_no=5) is None
