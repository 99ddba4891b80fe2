"""The moved table takes the app's name (a rename: rows, ids, check constraints and every run's and draft's
link are kept), and the content type (with its permissions) follows the model."""

from django.db import migrations

from physalign_site.migration_ops import move_content_type


class Migration(migrations.Migration):
    dependencies = [
        ("models_registry", "0001_initial"),
        ("evaluation", "0004_model_config_moves_to_registry"),
        ("annotation", "0007_model_config_moves_to_registry"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelTable(name="modelconfig", table=None),
        move_content_type("modelconfig", from_app="evaluation", to_app="models_registry"),
    ]
