"""Solve runs, responses, grading components and debate settings/turns now belong to the solving app
(solving 0001 takes them over); the tables are left as they are here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0004_model_config_moves_to_registry"),
        ("solving", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="DebateTurn"),
                migrations.DeleteModel(name="GradeComponent"),
                migrations.DeleteModel(name="DebateRun"),
                migrations.DeleteModel(name="SolveResponse"),
                migrations.DeleteModel(name="SolveRun"),
            ],
            database_operations=[],
        ),
    ]
