"""ModelConfig moves from evaluation to models_registry: state only, the table and its rows stay put
(models_registry 0002 renames the table)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evaluation", "0003_solving_debate"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ModelConfig",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.SlugField(max_length=100, unique=True)),
                        (
                            "provider",
                            models.CharField(
                                choices=[
                                    ("openai", "OpenAI"),
                                    ("anthropic", "Anthropic"),
                                    ("google", "Google GenAI"),
                                    ("openai_compatible", "OpenAI-compatible endpoint"),
                                    ("simulated", "Simulated (offline)"),
                                    ("scripted", "Scripted (tests)"),
                                    ("baseline-ocr-nearest", "Baseline: OCR + nearest region"),
                                ],
                                max_length=30,
                            ),
                        ),
                        ("model", models.CharField(max_length=200)),
                        ("base_url", models.URLField(blank=True, max_length=500)),
                        ("api_key_env", models.CharField(blank=True, max_length=100)),
                        ("max_output_tokens", models.PositiveIntegerField(blank=True, null=True)),
                        ("temperature", models.FloatField(blank=True, null=True)),
                        ("reasoning", models.JSONField(blank=True, default=dict)),
                        (
                            "image_policy",
                            models.CharField(
                                choices=[("send", "Send images"), ("none", "Text only")],
                                default="send",
                                max_length=10,
                            ),
                        ),
                        (
                            "price_in_per_mtok",
                            models.DecimalField(decimal_places=6, default=0, max_digits=12),
                        ),
                        (
                            "price_out_per_mtok",
                            models.DecimalField(decimal_places=6, default=0, max_digits=12),
                        ),
                        ("requests_per_minute", models.PositiveIntegerField(blank=True, null=True)),
                        ("max_concurrency", models.PositiveIntegerField(blank=True, null=True)),
                        ("timeout_seconds", models.FloatField(default=120)),
                        ("max_retries", models.PositiveSmallIntegerField(default=2)),
                        ("extra", models.JSONField(blank=True, default=dict)),
                        ("is_active", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "db_table": "evaluation_modelconfig",
                        "ordering": ["name"],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    (
                                        "provider__in",
                                        [
                                            "openai",
                                            "anthropic",
                                            "google",
                                            "openai_compatible",
                                            "simulated",
                                            "scripted",
                                            "baseline-ocr-nearest",
                                        ],
                                    )
                                ),
                                name="model_provider_valid",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("image_policy__in", ["send", "none"])),
                                name="model_image_policy_valid",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("price_in_per_mtok__gte", 0), ("price_out_per_mtok__gte", 0)
                                ),
                                name="model_prices_non_negative",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("max_retries__lte", 10)), name="model_retries_bounded"
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
