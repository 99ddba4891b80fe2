"""Operations the migrations that move a model between apps share (kept stable: old migrations import it)."""

from __future__ import annotations

from django.db import migrations


def move_content_type(model: str, *, from_app: str, to_app: str) -> migrations.RunPython:
    """The model's content type (and so its permissions) follows it to its new app, both ways."""

    def relabel(apps, old: str, new: str) -> None:
        content_types = apps.get_model("contenttypes", "ContentType")
        row = content_types.objects.filter(app_label=old, model=model).first()
        if row is None:
            return
        if content_types.objects.filter(app_label=new, model=model).exists():
            row.delete()
        else:
            row.app_label = new
            row.save(update_fields=["app_label"])

    return migrations.RunPython(
        lambda apps, schema_editor: relabel(apps, from_app, to_app),
        lambda apps, schema_editor: relabel(apps, to_app, from_app),
    )
