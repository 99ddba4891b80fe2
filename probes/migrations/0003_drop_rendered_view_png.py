"""The PNG bytes now live in the media storage (0002 moved them): drop the database column."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("probes", "0002_rendered_views_in_media_storage")]

    operations = [migrations.RemoveField(model_name="renderedview", name="png")]
