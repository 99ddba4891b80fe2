"""Home pages per role, the pipeline board, the source review queue and the grouped menus (issue 15 items 1–3)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import ParentProblem, PassDocument
from audit.models import Event
from evaluation.models import EvalRun
from home.nav import MENUS, menus_for
from physalign_site.roles import ALL_ROLES
from probes.models import Probe
from review.models import ReviewSlot
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory
from tests.probes.conftest import make_demo_parent
from tests.review.conftest import compile_all


def _figure(html: str, testid: str) -> int:
    match = re.search(rf'data-testid="{testid}"><span class="board__value">(\d+)</span>', html)
    assert match, f"{testid} not on the page"
    return int(match.group(1))


def _doc(parent, pass_no, status, **extra):
    return PassDocumentFactory(parent=parent, pass_no=pass_no, status=status, **extra)


@pytest.fixture
def work(db, django_user_model):
    """Six problems, one per work state (and one excluded)."""
    ann = make_user(django_user_model, "ann", "annotator")
    problems = {
        name: ParentProblemFactory(problem_id=f"p_{name}")
        for name in ("new", "draft", "rejected", "submitted", "stale", "excluded")
    }
    problems["excluded"].status = ParentProblem.Status.EXCLUDED
    problems["excluded"].save(update_fields=["status"])
    ProblemImageFactory(parent=problems["new"])  # to start: no pass yet, and a diagram to annotate
    _doc(problems["draft"], 1, PassDocument.Status.DRAFT)
    _doc(
        problems["rejected"],
        1,
        PassDocument.Status.REJECTED,
        review_note="R1 is drawn around the wrong resistor.",
        updated_by=ann,
    )
    _doc(problems["submitted"], 2, PassDocument.Status.SUBMITTED, updated_by=ann)
    _doc(problems["stale"], 1, PassDocument.Status.APPROVED, approved_sha256="0" * 64)
    return problems


def test_the_annotator_home_counts_each_work_state_and_each_count_links_to_the_same_problems(
    client, work, django_user_model
):
    ann = make_user(django_user_model, "ann2", "annotator")
    client.force_login(ann)
    html = client.get("/").content.decode()
    expected = {"to_start": 1, "in_progress": 1, "rejected": 1, "submitted": 1, "stale": 1}
    for key, count in expected.items():
        link = f'href="/problems/?work={key}"><span class="home-figures__value">{count}</span>'
        assert link in html, key
        listed = client.get(f"/problems/?work={key}").content.decode()
        assert re.search(rf"\s{count} problem{'s' if count != 1 else ''}\s", listed), key
    # the rejected pass is listed with the reviewer's note and opens the workspace
    assert "R1 is drawn around the wrong resistor." in html
    assert '/problems/p_rejected/passes/1/"' in html


def test_pass_badges_open_the_workspace_for_an_annotator_and_the_review_page_for_a_source_reviewer(
    client, work, django_user_model
):
    ann = make_user(django_user_model, "a1", "annotator")
    src = make_user(django_user_model, "s1", "source_reviewer")
    client.force_login(ann)
    listed = client.get("/problems/?q=p_submitted").content.decode()
    assert 'href="/problems/p_submitted/passes/2/"' in listed
    assert 'href="/problems/p_submitted/passes/1/"' in listed  # an editor may start a pass not written yet
    detail = client.get("/problems/p_submitted/").content.decode()
    assert '<a href="/problems/p_submitted/passes/2/" title="Open pass 2">Pass 2</a>' in detail
    client.force_login(src)
    listed = client.get("/problems/?q=p_submitted").content.decode()
    assert 'href="/problems/p_submitted/passes/2/review/"' in listed
    assert 'href="/problems/p_submitted/passes/1/' not in listed  # nothing to review on a pass not written
    detail = client.get("/problems/p_submitted/").content.decode()
    assert 'href="/problems/p_submitted/passes/5/' not in detail  # Pass 5 is not theirs to read
    # the review page's pass tabs stay on review pages
    review = client.get("/problems/p_submitted/passes/2/review/").content.decode()
    assert 'href="/problems/p_submitted/passes/2/review/"' in review
    assert 'class="ws-tab ws-tab--submitted" href="/problems/p_submitted/passes/2/"' not in review


def test_the_source_review_queue_filters_by_problem_pass_and_age_and_lists_stale_approvals(
    client, work, django_user_model
):
    src = make_user(django_user_model, "s2", "source_reviewer")
    other = ParentProblemFactory(problem_id="q_old")
    old = _doc(other, 3, PassDocument.Status.SUBMITTED)
    PassDocument.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=5))
    client.force_login(src)

    def count(query: str) -> int:
        html = client.get(f"/source-review/{query}").content.decode()
        return int(re.search(r'data-testid="queue-count">(\d+)<', html).group(1))

    assert count("") == 2
    assert count("?q=q_old") == 1
    assert count("?pass=2") == 1
    assert count("?pass=3") == 1
    assert count("?age=3") == 1  # only the five-day-old one
    assert count("?age=7") == 0
    assert count("?pass=9&age=x") == 2  # unknown values are no filter, not an error
    html = client.get("/source-review/").content.decode()
    assert html.index("q_old") < html.index("p_submitted")  # oldest first
    assert 'href="/problems/p_stale/passes/1/review/"' in html
    home = client.get("/").content.decode()
    assert (
        '<span class="home-figures__value">2</span> <span class="home-figures__label">passes waiting' in home
    )


def test_every_menu_item_opens_for_the_roles_it_is_shown_to_and_is_refused_to_the_others(
    client, db, django_user_model
):
    users = {role: make_user(django_user_model, f"menu_{role}", role) for role in ALL_ROLES}
    every_item = {item.url_name: item for _, items in MENUS for item in items}
    for role, user in users.items():
        client.force_login(user)
        shown = {item["url"] for group in menus_for(user) for item in group["items"]}
        page = client.get("/").content.decode()
        for url in shown:
            assert f'href="{url}"' in page, (role, url)
            assert client.get(url).status_code == 200, (role, url)
        for name in every_item:
            url = reverse(name)
            if url not in shown:
                assert client.get(url).status_code in (302, 403), (role, url)  # admin: Django's login
    admin_groups = [group["title"] for group in menus_for(users["admin"])]
    assert admin_groups == ["Annotation", "Review", "Probes & releases", "Evaluation", "Admin"]
    admin_items = ["Assignments", "Double annotation", "Annotation agreement", "Annotation analytics"]
    assert [i["label"] for i in menus_for(users["admin"])[-1]["items"]] == admin_items
    users["admin"].is_staff = True  # the Django admin site also needs staff status
    assert [i["label"] for i in menus_for(users["admin"])[-1]["items"]] == [*admin_items, "Django admin"]
    assert [g["title"] for g in menus_for(users["annotator"])] == ["Annotation"]
    assert [g["title"] for g in menus_for(users["probe_reviewer"])] == ["Annotation", "Review"]


def test_a_user_without_a_role_is_told_to_ask_for_one(client, db, django_user_model):
    client.force_login(django_user_model.objects.create_user("nobody", password="x"))
    html = client.get("/").content.decode()
    assert "Your account has no role yet" in html
    assert "navmenu" not in html


@pytest.fixture
def compiled(db, django_user_model):
    make_demo_parent(django_user_model)
    compile_all()
    return list(Probe.objects.order_by("logical_probe_id"))


def test_the_pipeline_board_counts_each_stage_and_says_what_blocks_the_next(
    client, compiled, work, django_user_model
):
    admin = make_user(django_user_model, "boss", "admin")
    client.force_login(admin)
    html = client.get("/").content.decode()
    parents = ParentProblem.objects.count()
    assert _figure(html, "stage-imported-parents") == parents == 7
    assert _figure(html, "stage-annotated-parents") == 1
    assert _figure(html, "stage-compiled-parents") == 1
    assert _figure(html, "stage-compiled-probes") == 3
    assert _figure(html, "stage-reviewed-parents") == 0
    assert _figure(html, "stage-released-probes") == 0
    # blockers, each a link to the list behind it
    assert '<a href="/problems/?work=rejected">1 with a rejected pass</a>' in html
    assert '<a href="/source-review/">1 awaiting source review</a>' in html
    assert '<a href="/probes/?state=pending_review">3 probes awaiting review</a>' in html
    assert '<a href="/problems/?status=excluded">1 excluded</a>' in html
    assert "Every approved parent is compiled." in html
    listed = client.get("/probes/?state=pending_review").content.decode()
    assert listed.count("/probes/" + compiled[0].logical_probe_id) >= 1
    # a run stopped at its budget waits for an admin: the board says so, and a running one is in progress
    EvalRun.objects.create(name="over budget", status=EvalRun.Status.PAUSED)
    EvalRun.objects.create(name="going", status=EvalRun.Status.RUNNING)
    html = client.get("/").content.decode()
    assert '<a href="/runs/">1 evaluation run paused at its budget</a>' in html
    assert '<a href="/runs/">1 evaluation run in progress</a>' in html


def test_home_pages_never_write(client, compiled, work, django_user_model):
    users = [make_user(django_user_model, f"w_{role}", role) for role in ALL_ROLES]
    before = (
        ReviewSlot.objects.count(),
        PassDocument.objects.count(),
        Event.objects.count(),
        ParentProblem.objects.filter(status="in_annotation").count(),
    )
    for user in users:
        client.force_login(user)
        assert client.get("/").status_code == 200
    after = (
        ReviewSlot.objects.count(),
        PassDocument.objects.count(),
        Event.objects.count(),
        ParentProblem.objects.filter(status="in_annotation").count(),
    )
    assert after == before


def test_a_reviewer_sees_their_open_slots_and_what_waits(client, compiled, django_user_model):
    alice = make_user(django_user_model, "alice", "probe_reviewer")
    client.force_login(alice)
    html = client.get("/").content.decode()
    assert (
        '<span class="home-figures__value">1</span> <span class="home-figures__label">parent waiting for a primary reviewer'
        in html
    )
    assert client.post("/review/claim/", {"role": "primary", "context": "development"}).status_code == 302
    html = client.get("/").content.decode()
    slot = ReviewSlot.objects.get(reviewer=alice)
    assert f'href="/review/slots/{slot.pk}/"' in html
    assert "3 of 3 probes left" in html
    assert (
        '<span class="home-figures__value">0</span> <span class="home-figures__label">parents waiting for a primary reviewer'
        in html
    )


@pytest.mark.parametrize("scale", [1, 10])
def test_the_admin_home_costs_the_same_number_of_queries_at_ten_times_the_rows(
    client, db, django_user_model, django_assert_max_num_queries, scale
):
    admin = make_user(django_user_model, "boss", "admin")
    for i in range(3 * scale):
        parent = ParentProblemFactory(problem_id=f"s_{i}")
        _doc(parent, 1, PassDocument.Status.SUBMITTED)
        _doc(parent, 2, PassDocument.Status.REJECTED, review_note="no")
    client.force_login(admin)
    with django_assert_max_num_queries(30):
        assert client.get("/").status_code == 200
