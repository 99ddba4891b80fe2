"""The moved table takes the audit app's name (a rename: rows, ids and the actor links are kept), its index
a name of its own, and the content type (with its permissions) follows the model to the new app."""

from django.db import migrations


def move_content_type(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    old = content_types.objects.filter(app_label="annotation", model="event").first()
    if old is None:
        return
    if content_types.objects.filter(app_label="audit", model="event").exists():
        old.delete()
    else:
        old.app_label = "audit"
        old.save(update_fields=["app_label"])


def restore_content_type(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    content_types.objects.filter(app_label="audit", model="event").update(app_label="annotation")


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0001_initial"),
        ("annotation", "0006_event_moves_to_audit"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelTable(name="event", table=None),
        migrations.RenameIndex(model_name="event", new_name="audit_event_object_idx",
                               old_name="annotation__object__f0cdbf_idx"),
        migrations.RunPython(move_content_type, restore_content_type),
    ]
