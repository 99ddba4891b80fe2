"""The one-slot-per-reviewer migration on a database with rows: a reviewer who raced into two roles of one
parent keeps the first claim, the unanswered second claim goes back to the queue, and the constraint holds."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

BEFORE = [
    ("review", "0001_review_slots_blind_answers_decisions_audit_signoff"),
    ("annotation", "0004_pass_approval_origin"),
]
AFTER = [("review", "0002_one_slot_per_reviewer_blind_order")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_duplicate_claims_are_released_then_the_constraint_applies():
    apps = apps_at(migrate_to(BEFORE), BEFORE)
    user = apps.get_model("auth", "User").objects.create(username="racer")
    source = apps.get_model("annotation", "Source").objects.create(name="S")
    parent = apps.get_model("annotation", "ParentProblem").objects.create(
        problem_id="P1",
        source=source,
        source_split="x",
        source_sample_id="1",
        language="en",
        answer_type="calc",
    )
    slots = apps.get_model("review", "ReviewSlot")
    from django.utils import timezone

    first = slots.objects.create(
        parent=parent,
        role="primary",
        context="development",
        blind_first_probe_id="Q",
        reviewer=user,
        claimed_at=timezone.now(),
    )
    second = slots.objects.create(
        parent=parent,
        role="secondary",
        context="development",
        blind_first_probe_id="Q",
        reviewer=user,
        claimed_at=timezone.now(),
    )

    apps = apps_at(migrate_to(AFTER), AFTER)
    slots = apps.get_model("review", "ReviewSlot")
    assert slots.objects.get(pk=first.pk).reviewer_id == user.pk
    assert slots.objects.get(pk=second.pk).reviewer_id is None
    with pytest.raises(IntegrityError), transaction.atomic():
        slots.objects.filter(pk=second.pk).update(reviewer_id=user.pk)
    migrate_to_latest()
