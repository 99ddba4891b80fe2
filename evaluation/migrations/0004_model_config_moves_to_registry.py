"""Runs point at models_registry.ModelConfig, which takes the model over (state only; the table stays)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_model_config_moves_to_registry"),
        ("evaluation", "0003_solving_debate"),
        ("models_registry", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="debaterun",
                    name="extractor",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="evalrequest",
                    name="model",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="debaterun",
                    name="frontend",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="debaterun",
                    name="selector",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="metricsnapshot",
                    name="model",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="debaterun",
                    name="pruner",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="debateturn",
                    name="model",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="solverun",
                    name="model",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="solve_runs",
                        to="models_registry.modelconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="evalrun",
                    name="model_configs",
                    field=models.ManyToManyField(related_name="eval_runs", to="models_registry.modelconfig"),
                ),
                migrations.DeleteModel(
                    name="ModelConfig",
                ),
            ],
            database_operations=[],
        ),
    ]
