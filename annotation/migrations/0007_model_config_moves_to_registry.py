"""Draft runs and drafts point at models_registry.ModelConfig (same table, same column: state only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_event_moves_to_audit"),
        ("models_registry", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="draftrun",
                    name="model_config",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="llmdraft",
                    name="model_config",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
