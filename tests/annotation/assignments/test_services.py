"""The assignment services: assign one by one or evenly, replace, unassign, the strict flag; who may be
assigned; every change audited and every refusal leaving everything as it was."""

from __future__ import annotations

from datetime import date

import pytest

from annotation.assignments.services import (
    assignment_assign,
    assignment_delete,
    assignment_unassign,
    edit_refusal,
    require_may_edit,
    source_assignment_strict_set,
)
from annotation.models import Assignment
from audit.models import Event
from physalign_site.errors import ApplicationError
from tests.factories import ParentProblemFactory, SourceFactory

pytestmark = pytest.mark.django_db
DUE = date(2026, 7, 1)


def holders(role: str = "annotator") -> dict[str, str]:
    return dict(
        Assignment.objects.filter(role=role)
        .order_by("parent__problem_id")
        .values_list("parent__problem_id", "user__username")
    )


def test_seven_problems_spread_over_three_annotators_in_problem_id_order(people, seven):
    pks = [p.pk for p in reversed(seven)]  # the order given does not matter: problem-id order does
    outcome = assignment_assign(
        parent_ids=pks, role="annotator", users=[people.ann_a, people.ann_b, people.ann_c], actor=people.admin
    )
    assert holders() == {
        "as_01": "ann_a",
        "as_02": "ann_b",
        "as_03": "ann_c",
        "as_04": "ann_a",
        "as_05": "ann_b",
        "as_06": "ann_c",
        "as_07": "ann_a",
    }
    assert (outcome.created, outcome.replaced, outcome.unchanged) == (7, 0, 0)
    assert outcome.per_user == {"ann_a": 3, "ann_b": 2, "ann_c": 2}
    events = Event.objects.filter(verb="assignment.set").order_by("pk")
    assert events.count() == 7
    first = events.first()
    assert first.actor == people.admin and first.before is None
    assert first.after == {"user": "ann_a", "due_date": None, "problem_id": "as_01", "role": "annotator"}


def test_one_user_with_a_due_date_then_replaced_then_the_same_again_records_nothing(people, seven):
    two = [seven[0].pk, seven[1].pk]
    assignment_assign(
        parent_ids=two, role="annotator", users=[people.ann_a], actor=people.admin, due_date=DUE
    )
    assert holders() == {"as_01": "ann_a", "as_02": "ann_a"}
    assert set(Assignment.objects.values_list("due_date", flat=True)) == {DUE}
    row = Assignment.objects.get(parent=seven[0])
    assert row.assigned_by == people.admin

    again = assignment_assign(
        parent_ids=[seven[0].pk], role="annotator", users=[people.ann_b], actor=people.admin
    )
    assert (again.created, again.replaced) == (0, 1)
    assert holders() == {"as_01": "ann_b", "as_02": "ann_a"}
    replaced = Event.objects.filter(verb="assignment.set", object_id=str(row.pk)).order_by("pk").last()
    assert replaced.before == {"user": "ann_a", "due_date": "2026-07-01"}
    assert replaced.after == {"user": "ann_b", "due_date": None, "problem_id": "as_01", "role": "annotator"}

    count = Event.objects.count()
    same = assignment_assign(
        parent_ids=[seven[0].pk], role="annotator", users=[people.ann_b], actor=people.admin
    )
    assert (same.created, same.replaced, same.unchanged) == (0, 0, 1)
    assert Event.objects.count() == count


def test_source_reviewers_are_assigned_the_same_way(people, seven):
    outcome = assignment_assign(
        parent_ids=[p.pk for p in seven[:3]],
        role="source_reviewer",
        users=[people.rev, people.rev2],
        actor=people.admin,
    )
    assert holders("source_reviewer") == {"as_01": "rev", "as_02": "rev2", "as_03": "rev"}
    assert outcome.per_user == {"rev": 2, "rev2": 1}


@pytest.mark.parametrize(
    ("role", "chosen", "message"),
    [
        ("annotator", ["ann_b", "rev"], "Not an annotator: rev."),
        ("source_reviewer", ["ann_a"], "Not a source reviewer: ann_a."),
        (
            "annotator",
            ["admin"],
            "Not an annotator: boss.",
        ),  # an admin is no annotator unless they hold the role
    ],
)
def test_an_assignee_must_hold_the_role(people, seven, role, chosen, message):
    with pytest.raises(ApplicationError) as refused:
        assignment_assign(
            parent_ids=[seven[0].pk],
            role=role,
            users=[getattr(people, n) for n in chosen],
            actor=people.admin,
        )
    assert refused.value.status_code == 400 and refused.value.code == "assignee_lacks_role"
    assert refused.value.message.startswith(message)
    assert not Assignment.objects.exists() and not Event.objects.exists()


def test_an_inactive_annotator_cannot_be_assigned(people, seven):
    people.ann_a.is_active = False
    people.ann_a.save()
    with pytest.raises(ApplicationError, match="Not an annotator: ann_a"):
        assignment_assign(
            parent_ids=[seven[0].pk], role="annotator", users=[people.ann_a], actor=people.admin
        )


def test_nobody_is_both_the_annotator_and_the_source_reviewer_of_a_problem(people, seven):
    assignment_assign(parent_ids=[seven[0].pk], role="annotator", users=[people.both], actor=people.admin)
    with pytest.raises(ApplicationError) as refused:
        assignment_assign(
            parent_ids=[seven[0].pk, seven[1].pk],
            role="source_reviewer",
            users=[people.both],
            actor=people.admin,
        )
    assert refused.value.code == "assignment_self_review" and refused.value.status_code == 400
    assert refused.value.message == "Nobody reviews their own pass: already the annotator of as_01 (both)."
    assert not Assignment.objects.filter(role="source_reviewer").exists()  # as_02 was not assigned either

    assignment_assign(
        parent_ids=[seven[1].pk], role="source_reviewer", users=[people.both], actor=people.admin
    )
    with pytest.raises(ApplicationError, match="already the source reviewer of as_02 \\(both\\)"):
        assignment_assign(parent_ids=[seven[1].pk], role="annotator", users=[people.both], actor=people.admin)
    assert holders() == {"as_01": "both"}


def test_refusals_without_an_admin_a_user_a_problem_or_a_known_role(people, seven):
    cases = [
        ({"actor": people.ann_a}, "assignment_forbidden", 403),
        ({"users": []}, "assignee_required", 400),
        ({"parent_ids": []}, "problems_required", 400),
        ({"role": "probe_reviewer"}, "assignment_role_unknown", 400),
        ({"users": [people.ann_a, people.ann_a]}, "assignee_repeated", 400),
    ]
    for change, code, status in cases:
        arguments = {
            "parent_ids": [seven[0].pk],
            "role": "annotator",
            "users": [people.ann_a],
            "actor": people.admin,
        }
        with pytest.raises(ApplicationError) as refused:
            assignment_assign(**{**arguments, **change})
        assert (refused.value.code, refused.value.status_code) == (code, status)
    assert not Assignment.objects.exists() and not Event.objects.exists()


def test_unassign_and_delete_are_audited(people, seven):
    assignment_assign(
        parent_ids=[p.pk for p in seven[:3]], role="annotator", users=[people.ann_a], actor=people.admin
    )
    removed = assignment_unassign(
        parent_ids=[seven[0].pk, seven[1].pk, seven[5].pk], role="annotator", actor=people.admin
    )
    assert removed == 2 and holders() == {"as_03": "ann_a"}
    gone = Event.objects.filter(verb="assignment.remove").order_by("pk")
    assert [e.before for e in gone] == [
        {"user": "ann_a", "due_date": None, "problem_id": "as_01", "role": "annotator"},
        {"user": "ann_a", "due_date": None, "problem_id": "as_02", "role": "annotator"},
    ]
    row = Assignment.objects.get()
    with pytest.raises(ApplicationError):
        assignment_delete(assignment=row, actor=people.ann_a)
    assignment_delete(assignment=row, actor=people.admin)
    assert not Assignment.objects.exists()
    assert Event.objects.filter(verb="assignment.remove").count() == 3


def test_the_strict_flag_is_audited_once_per_change(people, source):
    source_assignment_strict_set(source=source, strict=True, actor=people.admin)
    source_assignment_strict_set(source=source, strict=True, actor=people.admin)
    source.refresh_from_db()
    assert source.assignment_strict is True
    events = Event.objects.filter(verb="source.assignment_strict")
    assert [(e.before, e.after) for e in events] == [
        ({"assignment_strict": False}, {"assignment_strict": True})
    ]
    with pytest.raises(ApplicationError) as refused:
        source_assignment_strict_set(source=source, strict=False, actor=people.rev)
    assert refused.value.status_code == 403
    source.refresh_from_db()
    assert source.assignment_strict is True


def test_who_may_edit_under_strict_and_open_assignment(people):
    strict, open_ = SourceFactory(name="strict-src", assignment_strict=True), SourceFactory(name="open-src")
    assigned = ParentProblemFactory(problem_id="st_assigned", source=strict)
    unassigned = ParentProblemFactory(problem_id="st_free", source=strict)
    open_assigned = ParentProblemFactory(problem_id="op_assigned", source=open_)
    for parent in (assigned, open_assigned):
        assignment_assign(parent_ids=[parent.pk], role="annotator", users=[people.ann_a], actor=people.admin)

    assert edit_refusal(people.ann_a, assigned) == ""
    assert edit_refusal(people.ann_b, assigned) == (
        "st_assigned is assigned to ann_a, and its source uses strict assignment: only they (and admins) may edit "
        "its passes."
    )
    assert edit_refusal(people.ann_a, unassigned) == (
        "st_free is not assigned to anyone, and its source uses strict assignment: only admins may edit it until "
        "an admin assigns it."
    )
    for parent in (assigned, unassigned):
        assert edit_refusal(people.admin, parent) == ""
        assert edit_refusal(None, parent) == ""  # the server's operator (imports, commands)
    assert edit_refusal(people.ann_b, open_assigned) == ""  # open: assignment orders work, locks nothing
    with pytest.raises(ApplicationError) as refused:
        require_may_edit(people.ann_b, assigned)
    assert (refused.value.status_code, refused.value.code) == (403, "not_assignee")
