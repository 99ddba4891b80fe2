"""Event now belongs to the audit app (audit 0001 takes it over); the table is left as it is here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_parent_kit_source"),
        ("audit", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Event")],
            database_operations=[],
        ),
    ]
