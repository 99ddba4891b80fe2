"""The moved tables take the solving app's names (renames: rows, ids, constraints and links are kept), and
the content types (with their permissions) follow the models."""

from django.db import migrations

from physalign_site.migration_ops import move_content_type

MODELS = ("solverun", "solveresponse", "gradecomponent", "debaterun", "debateturn")


class Migration(migrations.Migration):
    dependencies = [
        ("solving", "0001_initial"),
        ("evaluation", "0005_solving_moves_to_its_app"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        *(migrations.AlterModelTable(name=name, table=None) for name in MODELS),
        *(move_content_type(name, from_app="evaluation", to_app="solving") for name in MODELS),
    ]
