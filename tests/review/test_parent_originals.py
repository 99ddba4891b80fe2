"""The parent's original images on the reveal page (issue 15 items 2 and 8): the slot's reviewer sees them, in
the zoomable viewer, only once the blind order opens the probe's target; the image view refuses before, and
for anyone else."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import ProblemImage
from review import services
from review.models import BlindOrder, Role
from review.selectors import slot_work
from tests.conftest import make_user
from tests.probes.conftest import make_demo_parent

from .conftest import compile_all
from .test_flow import gold_blind

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def original_url(slot, probe, image_id: str = "img_0") -> str:
    return f"/review/slots/{slot.pk}/probes/{probe.logical_probe_id}/originals/{image_id}"


def target_url(slot, probe) -> str:
    return f"/review/slots/{slot.pk}/probes/{probe.logical_probe_id}/target/"


def image_bytes(probe) -> bytes:
    image = ProblemImage.objects.get(parent=probe.parent, image_id="img_0")
    with image.file.open("rb") as handle:
        return handle.read()


def test_strict_order_the_originals_open_with_the_targets(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    first, *others = slot_work(slot)
    client = client_for(alice)

    refused = client.get(original_url(slot, first))
    assert refused.status_code == 403
    assert b"Submit your blind answer first." in refused.content

    services.review_submit_blind(slot=slot, probe=first, reviewer=alice, given=gold_blind(first))
    refused = client.get(original_url(slot, first))
    assert refused.status_code == 403  # strict: every probe of the parent first
    assert b"2 probes still to answer" in refused.content

    for probe in others:
        services.review_submit_blind(slot=slot, probe=probe, reviewer=alice, given=gold_blind(probe))
    served = client.get(original_url(slot, first))
    assert served.status_code == 200
    assert served["Content-Type"] == "image/png"
    assert b"".join(served.streaming_content) == image_bytes(first)

    page = client.get(target_url(slot, first)).content.decode()
    assert 'id="parent-originals"' in page
    assert f'href="{original_url(slot, first)}"' in page
    assert "data-viewer-gallery" in page and 'role="dialog"' not in page  # the dialog is built by viewer.js
    assert f'href="/problems/{first.parent.problem_id}/"' in page  # a page the reviewer's role may open
    assert "SECRET-ANSWER" not in page and "SECRET-SOLUTION" not in page

    assert client.get(original_url(slot, first, "img_9")).status_code == 404
    assert client_for(reviewers["bob"]).get(original_url(slot, first)).status_code == 403
    assert client_for(reviewers["admin"]).get(original_url(slot, first)).status_code == 403
    assert Client().get(original_url(slot, first)).status_code == 302


def test_kit_order_the_originals_follow_the_probe_target(demo_probes, reviewers):
    services.review_context_set_blind_order(
        context="development", order=BlindOrder.KIT, actor=reviewers["admin"]
    )
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    first, second, _ = slot_work(slot)
    services.review_submit_blind(slot=slot, probe=first, reviewer=alice, given=gold_blind(first))
    client = client_for(alice)
    assert client.get(original_url(slot, first)).status_code == 200
    assert client.get(original_url(slot, second)).status_code == 403  # not answered blind: its gate is shut


def test_a_probe_of_another_parent_is_not_found_through_this_slot(demo_probes, reviewers, django_user_model):
    make_demo_parent(django_user_model, problem_id="OTHER_PARENT", sample="S_OTHER")
    compile_all()
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    for probe in slot_work(slot):
        services.review_submit_blind(slot=slot, probe=probe, reviewer=alice, given=gold_blind(probe))
    stranger = next(
        p for p in type(demo_probes[0]).objects.select_related("parent") if p.parent_id != slot.parent_id
    )
    assert client_for(alice).get(original_url(slot, stranger)).status_code == 404


def test_the_problem_link_leads_to_a_page_the_reviewer_may_open(demo_probes, django_user_model):
    dora = make_user(django_user_model, "dora", "probe_reviewer")
    slot = services.review_claim(reviewer=dora, role=Role.PRIMARY, context="development")
    for probe in slot_work(slot):
        services.review_submit_blind(slot=slot, probe=probe, reviewer=dora, given=gold_blind(probe))
    probe = slot_work(slot)[0]
    client = client_for(dora)
    page = client.get(target_url(slot, probe)).content.decode()
    assert 'id="problem-link"' in page
    problem_page = client.get(f"/problems/{probe.parent.problem_id}/")
    assert problem_page.status_code == 200
    assert b"SECRET-ANSWER" not in problem_page.content and b"SECRET-SOLUTION" not in problem_page.content
