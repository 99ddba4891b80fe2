"""The moved table takes the audit app's name (a rename: rows, ids and the actor links are kept), its index
a name of its own, and the content type (with its permissions) follows the model to the new app."""

from django.db import migrations

from physalign_site.migration_ops import move_content_type


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0001_initial"),
        ("annotation", "0006_event_moves_to_audit"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelTable(name="event", table=None),
        migrations.RenameIndex(
            model_name="event", new_name="audit_event_object_idx", old_name="annotation__object__f0cdbf_idx"
        ),
        move_content_type("event", from_app="annotation", to_app="audit"),
    ]
