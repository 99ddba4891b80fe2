"""Solving responses share the one list of stored output statuses (choices only; no database change)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("solving", "0002_table_names"),
    ]

    operations = [
        migrations.AlterField(
            model_name="solveresponse",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("running", "Running"),
                    ("completed", "Completed"),
                    ("unparseable", "Unparseable"),
                    ("refusal", "Refusal"),
                    ("truncated", "Truncated"),
                    ("infra_missing", "Infrastructure missing"),
                ],
                default="pending",
                max_length=14,
            ),
        ),
    ]
