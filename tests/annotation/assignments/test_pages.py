"""The assignments page as an admin uses it: filter, tick, assign to one or spread over several with a due date,
assign every match, unassign, toggle a source's strict flag; a refusal is a 400 that says why and changes
nothing; the page's queries do not grow with the number of problems."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.assignments.services import assignment_assign
from annotation.models import Assignment, ParentProblem, Source
from audit.models import Event
from tests.factories import ParentProblemFactory, SourceFactory

pytestmark = pytest.mark.django_db
PAGE = "/assignments/"


def holders(role: str = "annotator") -> dict[str, tuple[str, str | None]]:
    rows = Assignment.objects.filter(role=role).order_by("parent__problem_id")
    return {
        r.parent.problem_id: (r.user.username, r.due_date.isoformat() if r.due_date else None)
        for r in rows.select_related("parent", "user")
    }


def test_the_page_lists_the_filtered_problems_with_both_assignees(client, people, seven):
    other = SourceFactory(name="PhysReason")
    ParentProblemFactory(problem_id="zz_other", source=other, domain="optics")
    assignment_assign(parent_ids=[seven[0].pk], role="annotator", users=[people.ann_a], actor=people.admin)
    assignment_assign(
        parent_ids=[seven[0].pk], role="source_reviewer", users=[people.rev], actor=people.admin
    )
    client.force_login(people.admin)

    everything = client.get(PAGE)
    assert everything.status_code == 200
    html = everything.content.decode()
    assert re.findall(r'data-problem="([^"]+)"', html) == [*(p.problem_id for p in seven), "zz_other"]
    row = re.search(r'data-problem="as_01".*?</tr>', html, re.S).group(0)
    assert re.findall(r'data-testid="assignee">([^<]+)<', row) == ["ann_a", "rev"]
    assert "only the problem&#x27;s assigned annotator (and admins) may save, submit or revert" in html
    assert "assignment orders the work, it locks nothing" in html

    source_id = Source.objects.get(name="SeePhys").pk
    filtered = client.get(PAGE, {"source": source_id, "unassigned": "annotator"}).content.decode()
    assert re.findall(r'data-problem="([^"]+)"', filtered) == [p.problem_id for p in seven[1:]]
    assert client.get(PAGE, {"domain": "optics"}).context["page"].paginator.count == 1
    mine = client.get(PAGE, {"assignee": people.rev.pk}).content.decode()
    assert re.findall(r'data-problem="([^"]+)"', mine) == ["as_01"]
    # an unknown filter value is no filter (a stale bookmark), never an error
    assert client.get(PAGE, {"status": "nope", "source": "x"}).context["page"].paginator.count == 8


def test_spread_three_ticked_problems_over_two_annotators_with_a_due_date(client, people, seven):
    client.force_login(people.admin)
    response = client.post(
        f"{PAGE}?unassigned=annotator",
        {
            "form": "assign",
            "do": "assign_selected",
            "role": "annotator",
            "user": [people.ann_b.pk, people.ann_a.pk],
            "due_date": "2026-07-01",
            "problem": [seven[4].pk, seven[0].pk, seven[2].pk],
        },
    )
    assert response.status_code == 302 and response["Location"] == f"{PAGE}?unassigned=annotator"
    assert holders() == {
        "as_01": ("ann_a", "2026-07-01"),
        "as_03": ("ann_b", "2026-07-01"),
        "as_05": ("ann_a", "2026-07-01"),
    }
    shown = [str(m) for m in client.get(response["Location"]).context["messages"]]
    assert shown == ["Assigned 3 problems as annotator: ann_a 2, ann_b 1, due 2026-07-01."]


def test_assign_every_match_to_everyone_holding_the_role_then_unassign_them(client, people, seven):
    ParentProblemFactory(problem_id="zz_elsewhere", source=SourceFactory(name="Elsewhere"))
    client.force_login(people.admin)
    source_id = Source.objects.get(name="SeePhys").pk
    response = client.post(
        f"{PAGE}?source={source_id}",
        {"form": "assign", "do": "assign_matching", "role": "source_reviewer", "everyone": "1"},
    )
    assert response.status_code == 302
    # everyone holding the role, by username: both, rev, rev2
    assert {pid: user for pid, (user, _) in holders("source_reviewer").items()} == {
        "as_01": "both",
        "as_02": "rev",
        "as_03": "rev2",
        "as_04": "both",
        "as_05": "rev",
        "as_06": "rev2",
        "as_07": "both",
    }
    response = client.post(
        f"{PAGE}?source={source_id}", {"form": "assign", "do": "unassign_matching", "role": "source_reviewer"}
    )
    assert response.status_code == 302 and not Assignment.objects.exists()
    assert Event.objects.filter(verb="assignment.remove").count() == 7


@pytest.mark.parametrize(
    ("posted", "message"),
    [
        ({"do": "assign_selected", "user": ["ann_a"]}, "Tick at least one problem"),
        ({"do": "assign_matching"}, "Choose whom to assign"),
        ({"do": "assign_matching", "user": ["rev"]}, "Not an annotator: rev."),
        ({"do": "nonsense", "user": ["ann_a"]}, "do: Select a valid choice."),
    ],
)
def test_a_refused_action_is_a_400_that_says_why_and_changes_nothing(client, people, seven, posted, message):
    client.force_login(people.admin)
    body = {"form": "assign", "role": "annotator", **posted}
    body["user"] = [getattr(people, name).pk for name in posted.get("user", [])]
    response = client.post(PAGE, body)
    assert response.status_code == 400
    assert message in re.search(r'data-testid="assign-error">([^<]+)<', response.content.decode()).group(1)
    assert not Assignment.objects.exists() and not Event.objects.exists()


def test_an_admin_toggles_a_source_strict_and_back(client, people, source):
    client.force_login(people.admin)
    response = client.post(PAGE, {"form": "strict", "source": source.pk, "strict": "1"})
    assert response.status_code == 302
    source.refresh_from_db()
    assert source.assignment_strict is True
    page = client.get(PAGE)
    assert [str(m) for m in page.context["messages"]] == [
        "SeePhys: strict assignment. Only a problem's assigned annotator (and admins) may edit its passes; "
        "unassigned problems are editable by admins only until assigned."
    ]
    assert re.search(
        r'data-source="SeePhys">.*?data-testid="strict-state">strict<', page.content.decode(), re.S
    )
    client.post(PAGE, {"form": "strict", "source": source.pk, "strict": "0"})
    source.refresh_from_db()
    assert source.assignment_strict is False
    assert Event.objects.filter(verb="source.assignment_strict").count() == 2
    assert client.post(PAGE, {"form": "strict", "source": 999999, "strict": "1"}).status_code == 404


@pytest.mark.parametrize("role", ["ann_a", "rev", "both"])
def test_only_admins_open_or_post_the_page(client, people, seven, role):
    client.force_login(getattr(people, role))
    assert client.get(PAGE).status_code == 403
    posted = client.post(
        PAGE, {"form": "assign", "do": "assign_matching", "role": "annotator", "user": [people.ann_a.pk]}
    )
    assert posted.status_code == 403 and not Assignment.objects.exists()


def test_anonymous_visitors_go_to_the_login_page(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and response["Location"] == f"/accounts/login/?next={PAGE}"


def _page_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(PAGE).status_code == 200
    return len(queries)


def test_the_page_costs_the_same_queries_at_five_and_at_sixty_problems(
    client, people, source, django_assert_max_num_queries
):
    def grow(to: int) -> None:
        for n in range(ParentProblem.objects.count(), to):
            parent = ParentProblemFactory(problem_id=f"q_{n:03d}", source=source)
            assignment_assign(
                parent_ids=[parent.pk], role="annotator", users=[people.ann_a], actor=people.admin
            )
            assignment_assign(
                parent_ids=[parent.pk], role="source_reviewer", users=[people.rev], actor=people.admin
            )

    client.force_login(people.admin)
    grow(5)
    small = _page_queries(client)
    grow(60)
    large = _page_queries(client)
    assert small == large, (small, large)
    with django_assert_max_num_queries(12):
        client.get(PAGE)
