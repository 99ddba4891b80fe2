"""Event moves from annotation to audit without touching the table: state only (the rows stay put)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("annotation", "0005_parent_kit_source"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Event",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("verb", models.CharField(max_length=100)),
                        ("object_type", models.CharField(max_length=100)),
                        ("object_id", models.CharField(max_length=200)),
                        ("before", models.JSONField(blank=True, null=True)),
                        ("after", models.JSONField(blank=True, null=True)),
                        (
                            "actor",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_event",
                        "ordering": ["-at", "-id"],
                        "indexes": [
                            models.Index(
                                fields=["object_type", "object_id"], name="annotation__object__f0cdbf_idx"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
