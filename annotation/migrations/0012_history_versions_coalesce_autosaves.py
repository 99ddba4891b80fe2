"""History versions coalesce autosaves (issue 28 item 5): a version records the save counter of its last save
(``document_version``, the If-Match value), its first and last save times and how many saves it holds. Existing
versions were one save each, numbered by the save counter, and take no later saves; a pass document keeps the
number of its newest version (``history_version``)."""

import django.utils.timezone
from django.db import migrations, models
from django.db.models.functions import Coalesce


def one_save_each(apps, schema_editor):
    PassDocument = apps.get_model("annotation", "PassDocument")
    PassDocumentVersion = apps.get_model("annotation", "PassDocumentVersion")
    PassDocumentVersion.objects.update(
        document_version=models.F("version"), last_saved_at=models.F("saved_at"), save_count=1
    )
    newest = (
        PassDocumentVersion.objects.filter(pass_document=models.OuterRef("pk"))
        .order_by("-version")
        .values("version")[:1]
    )
    PassDocument.objects.update(history_version=Coalesce(models.Subquery(newest), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_source_reviews_and_record_comments"),
    ]

    operations = [
        migrations.AddField(
            model_name="passdocument",
            name="history_version",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AlterField(
            model_name="passdocumentversion",
            name="saved_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="passdocumentversion",
            name="document_version",
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="passdocumentversion",
            name="last_saved_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="passdocumentversion",
            name="save_count",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="passdocumentversion",
            name="absorbs_saves",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(one_save_each, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="passdocumentversion",
            constraint=models.UniqueConstraint(
                fields=("pass_document", "document_version"), name="one_row_per_pass_save_counter"
            ),
        ),
        migrations.AddConstraint(
            model_name="passdocumentversion",
            constraint=models.CheckConstraint(
                condition=models.Q(save_count__gte=1), name="pass_version_holds_a_save"
            ),
        ),
        migrations.AddConstraint(
            model_name="passdocumentversion",
            constraint=models.CheckConstraint(
                condition=models.Q(last_saved_at__gte=models.F("saved_at")),
                name="pass_version_last_save_after_first",
            ),
        ),
    ]
