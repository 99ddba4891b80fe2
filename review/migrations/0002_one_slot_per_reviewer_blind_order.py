import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def release_second_claims(apps, schema_editor):
    """Before the one-slot-per-reviewer constraint: a reviewer who raced into two roles of one parent keeps the
    first claim; a later claim without blind answers goes back to the queue. Two claims that both hold blind
    answers cannot be repaired without losing review evidence, so the migration stops and names them."""
    slot_model = apps.get_model("review", "ReviewSlot")
    blind_model = apps.get_model("review", "BlindAnswer")
    seen: dict[tuple, int] = {}
    stuck = []
    for slot in slot_model.objects.exclude(reviewer=None).order_by("claimed_at", "pk"):
        key = (slot.parent_id, slot.context, slot.reviewer_id)
        if key not in seen:
            seen[key] = slot.pk
        elif blind_model.objects.filter(slot_id=slot.pk).exists():
            stuck.append((seen[key], slot.pk))
        else:
            slot_model.objects.filter(pk=slot.pk).update(reviewer=None, claimed_at=None)
    if stuck:
        raise RuntimeError(
            f"Review slots held twice by one reviewer, both with blind answers: {stuck}. Decide "
            "which review stands, delete the other slot's rows, then migrate again."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_pass_approval_origin"),
        ("review", "0001_review_slots_blind_answers_decisions_audit_signoff"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ReviewContextSetting",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("context", models.CharField(max_length=40, unique=True)),
                (
                    "blind_order",
                    models.CharField(
                        choices=[
                            ("strict", "Strict: every probe of the parent blind before any reveal"),
                            ("kit", "Kit: the blind-first probe before the first reveal"),
                        ],
                        default="strict",
                        max_length=8,
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.RunPython(release_second_claims, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="reviewslot",
            constraint=models.UniqueConstraint(
                condition=models.Q(("reviewer__isnull", False)),
                fields=("parent", "context", "reviewer"),
                name="one_slot_per_reviewer_per_parent",
            ),
        ),
        migrations.AddField(
            model_name="reviewcontextsetting",
            name="updated_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="reviewcontextsetting",
            constraint=models.CheckConstraint(
                condition=models.Q(("blind_order__in", ["strict", "kit"])), name="review_blind_order_valid"
            ),
        ),
    ]
