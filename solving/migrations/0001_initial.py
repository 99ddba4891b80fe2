"""Solving runs, responses, grading components and debate settings/turns move from evaluation to solving:
state only, the tables and their rows stay put (solving 0002 renames the tables)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evaluation", "0004_model_config_moves_to_registry"),
        ("annotation", "0007_model_config_moves_to_registry"),
        ("models_registry", "0002_model_config_table_name"),
        ("probes", "0001_probes_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SolveRun",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(blank=True, max_length=200)),
                        (
                            "kind",
                            models.CharField(
                                choices=[("single", "Single solver"), ("debate", "Debate solver")],
                                default="single",
                                max_length=10,
                            ),
                        ),
                        ("parent_ids", models.JSONField(default=list)),
                        ("seed", models.IntegerField(default=2027)),
                        ("options", models.JSONField(blank=True, default=dict)),
                        ("manifest", models.JSONField(blank=True, default=dict)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("cancelled", "Cancelled"),
                                    ("grading", "Awaiting expert grading"),
                                    ("completed", "Completed"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=10,
                            ),
                        ),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="solve_runs",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "release",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="solve_runs",
                                to="probes.release",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_solverun",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="SolveResponse",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("claims", models.PositiveSmallIntegerField(default=0)),
                        ("attempts", models.JSONField(blank=True, default=list)),
                        ("claim_token", models.CharField(blank=True, max_length=32)),
                        ("claimed_at", models.DateTimeField(blank=True, null=True)),
                        ("raw_output", models.TextField(blank=True, null=True)),
                        ("finish_reason", models.CharField(blank=True, max_length=30)),
                        ("provider_status", models.CharField(blank=True, max_length=20)),
                        ("error", models.TextField(blank=True)),
                        ("input_tokens", models.PositiveIntegerField(default=0)),
                        ("output_tokens", models.PositiveIntegerField(default=0)),
                        ("cost_usd", models.DecimalField(decimal_places=8, default=0, max_digits=14)),
                        ("latency_ms", models.PositiveIntegerField(default=0)),
                        ("request_hash", models.CharField(blank=True, max_length=64)),
                        ("completed_at", models.DateTimeField(blank=True, null=True)),
                        ("answer_type", models.CharField(max_length=10)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("running", "Running"),
                                    ("completed", "Completed"),
                                    ("refusal", "Refusal"),
                                    ("truncated", "Truncated"),
                                    ("infra_missing", "Infrastructure missing"),
                                ],
                                default="pending",
                                max_length=14,
                            ),
                        ),
                        ("final_answer", models.TextField(blank=True)),
                        ("calls", models.PositiveIntegerField(default=0)),
                        (
                            "grading",
                            models.CharField(
                                choices=[
                                    ("script", "Scored by script"),
                                    ("pending", "Awaiting expert grading"),
                                    ("graded", "Graded by an expert"),
                                    ("none", "Not gradable (no response)"),
                                ],
                                default="script",
                                max_length=10,
                            ),
                        ),
                        ("match", models.BooleanField(null=True)),
                        ("credit", models.FloatField(null=True)),
                        ("correct", models.BooleanField(null=True)),
                        ("graded_at", models.DateTimeField(blank=True, null=True)),
                        ("grade_note", models.TextField(blank=True)),
                        (
                            "graded_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "parent",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="annotation.parentproblem",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="responses",
                                to="solving.solverun",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_solveresponse",
                        "ordering": ["run", "pk"],
                    },
                ),
                migrations.CreateModel(
                    name="DebateRun",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("solver_names", models.JSONField(default=list)),
                        ("level", models.PositiveSmallIntegerField(default=1)),
                        ("settings", models.JSONField(blank=True, default=dict)),
                        (
                            "extractor",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "frontend",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "pruner",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "selector",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "solve_run",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="debate",
                                to="solving.solverun",
                            ),
                        ),
                    ],
                    options={"db_table": "evaluation_debaterun"},
                ),
                migrations.CreateModel(
                    name="GradeComponent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("order", models.PositiveSmallIntegerField()),
                        ("description", models.CharField(max_length=500)),
                        ("awarded", models.DecimalField(decimal_places=2, max_digits=7)),
                        ("maximum", models.DecimalField(decimal_places=2, max_digits=7)),
                        (
                            "response",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="components",
                                to="solving.solveresponse",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_gradecomponent",
                        "ordering": ["response", "order"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("response", "order"), name="grade_component_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("maximum__gt", 0)),
                                name="grade_component_maximum_positive",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("awarded__gte", 0), ("awarded__lte", models.F("maximum"))
                                ),
                                name="grade_component_awarded_bounded",
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="DebateTurn",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("seq", models.PositiveIntegerField()),
                        ("round", models.PositiveSmallIntegerField(default=0)),
                        ("stage", models.CharField(max_length=20)),
                        ("agent", models.CharField(blank=True, max_length=100)),
                        ("request", models.JSONField(blank=True, default=dict)),
                        ("raw_output", models.TextField(blank=True)),
                        ("parsed", models.JSONField(blank=True, default=dict)),
                        ("status", models.CharField(blank=True, max_length=20)),
                        ("input_tokens", models.PositiveIntegerField(default=0)),
                        ("output_tokens", models.PositiveIntegerField(default=0)),
                        ("cost_usd", models.DecimalField(decimal_places=8, default=0, max_digits=14)),
                        ("latency_ms", models.PositiveIntegerField(default=0)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "model",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="models_registry.modelconfig",
                            ),
                        ),
                        (
                            "response",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="turns",
                                to="solving.solveresponse",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evaluation_debateturn",
                        "ordering": ["response", "seq"],
                        "constraints": [
                            models.UniqueConstraint(fields=("response", "seq"), name="debate_turn_unique")
                        ],
                    },
                ),
                migrations.AddConstraint(
                    model_name="solverun",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("kind__in", ["single", "debate"])), name="solve_run_kind_valid"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solverun",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            (
                                "status__in",
                                ["queued", "running", "cancelled", "grading", "completed", "failed"],
                            )
                        ),
                        name="solve_run_status_valid",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solverun",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("kind", "single"), _negated=True),
                            ("model__isnull", False),
                            _connector="OR",
                        ),
                        name="solve_run_single_has_model",
                    ),
                ),
                migrations.AddIndex(
                    model_name="solveresponse",
                    index=models.Index(fields=["run", "status"], name="solve_response_run_status"),
                ),
                migrations.AddConstraint(
                    model_name="solveresponse",
                    constraint=models.UniqueConstraint(
                        fields=("run", "parent"), name="solve_response_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solveresponse",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("credit__isnull", True),
                            models.Q(("credit__gte", 0), ("credit__lte", 1)),
                            _connector="OR",
                        ),
                        name="solve_response_credit_unit",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solveresponse",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("claims__lte", 3)), name="solve_response_claims_bounded"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solveresponse",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("grading__in", ["script", "pending", "graded", "none"])),
                        name="solve_response_grading_valid",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="debaterun",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("level__gte", 1), ("level__lte", 5)),
                        name="debate_run_level_valid",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
