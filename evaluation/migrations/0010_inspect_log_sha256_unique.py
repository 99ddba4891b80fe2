"""One run per imported inspect_ai log file: a unique index on the SHA-256 of the log's
bytes, which ``evaluation.runs.inspect_log`` keeps in the run's options as ``inspect_log_sha256``.

An index on an expression of the JSON options, so the model and its migration state do not change; runs
without the key (every run the app executes) index NULL, which never collides."""

from django.db import migrations

INDEX = "eval_run_inspect_log_sha256_uniq"  # evaluation.runs.inspect_log.SHA256_INDEX
EXPRESSION = {
    # the expression Django's ``options__inspect_log_sha256=…`` lookup compares
    "postgresql": "((options -> 'inspect_log_sha256'))",
    "sqlite": "(json_extract(options, '$.inspect_log_sha256'))",
}


def index_create(apps, schema_editor):
    expression = EXPRESSION.get(schema_editor.connection.vendor)
    if expression is not None:
        table = schema_editor.quote_name(apps.get_model("evaluation", "EvalRun")._meta.db_table)
        schema_editor.execute(f"CREATE UNIQUE INDEX {INDEX} ON {table} {expression}")


def index_drop(apps, schema_editor):
    if schema_editor.connection.vendor in EXPRESSION:
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0009_provider_batches")]

    operations = [migrations.RunPython(index_create, index_drop)]
