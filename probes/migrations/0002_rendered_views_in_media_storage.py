"""Rendered views move from the database (``RenderedView.png``, a BinaryField) to the media storage: each view's
bytes are written once under their content-addressed name (``views/<sha256[:2]>/<sha256>.png``), the row keeps
the name in ``file``, then the BinaryField is dropped (0003: on PostgreSQL a table cannot be altered in the transaction that just
updated its rows). Reversible: going back reads the files into the column.

The name rule is written out here, not imported, so this migration keeps meaning what it meant when later code
changes (``probes.attachments.view_storage_name`` is the live copy)."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import migrations, models

BATCH = 500


def _name(sha256: str) -> str:
    return f"views/{sha256[:2]}/{sha256}.png"


def views_to_files(apps, schema_editor):
    views = apps.get_model("probes", "RenderedView")
    pks = list(views.objects.filter(file="").order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):  # a batch of PNGs in memory at a time, not all 300 MB
        batch = views.objects.filter(pk__in=pks[start : start + BATCH]).values_list("pk", "png")
        for pk, png in batch:
            data = bytes(png)
            name = _name(hashlib.sha256(data).hexdigest())
            if not (default_storage.exists(name) and default_storage.size(name) == len(data)):
                if default_storage.exists(name):
                    default_storage.delete(name)
                default_storage.save(name, ContentFile(data))
            views.objects.filter(pk=pk).update(file=name)


def files_to_views(apps, schema_editor):
    views = apps.get_model("probes", "RenderedView")
    for pk, name in views.objects.exclude(file="").values_list("pk", "file").iterator(chunk_size=BATCH):
        with default_storage.open(name, "rb") as handle:
            views.objects.filter(pk=pk).update(png=handle.read())


class Migration(migrations.Migration):
    dependencies = [("probes", "0001_probes_initial")]

    operations = [
        migrations.AddField(
            model_name="renderedview",
            name="file",
            field=models.FileField(default="", max_length=200, upload_to=""),
            preserve_default=False,
        ),
        # Nullable first, so that going back can re-add the dropped column before the files fill it.
        migrations.AlterField(model_name="renderedview", name="png", field=models.BinaryField(null=True)),
        migrations.RunPython(views_to_files, files_to_views, elidable=False),
    ]
