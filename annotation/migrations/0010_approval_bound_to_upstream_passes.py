from collections import defaultdict

from django.db import migrations, models

from annotation.binding import APPROVAL_UNBOUND_UPSTREAM, upstream_digest

BATCH = 500


def bind_existing_approvals(apps, schema_editor):
    """Every pass's upstream digest from its parent's passes as stored, and every approval on record bound to
    it, unless a pass it builds on got a new version after the approval: that approval was given on other
    upstream content and is stale (``APPROVAL_UNBOUND_UPSTREAM``) until a source reviewer renews it."""
    PassDocument = apps.get_model("annotation", "PassDocument")
    by_parent = defaultdict(list)
    rows = PassDocument.objects.annotate(last_version_at=models.Max("versions__saved_at")).values_list(
        "pk", "parent_id", "pass_no", "document_sha256", "last_version_at", "approved_sha256", "approved_at"
    )
    for row in rows.iterator(chunk_size=BATCH):
        by_parent[row[1]].append(row)
    for passes in by_parent.values():
        hashes = {pass_no: sha for _, _, pass_no, sha, *_ in passes}
        for pk, _, pass_no, _, _, approved_sha, approved_at in passes:
            upstream = upstream_digest(pass_no, hashes)
            fields = {"upstream_sha256": upstream}
            if approved_sha:
                changed_since = any(
                    other_no < pass_no and None not in (approved_at, saved_at) and saved_at > approved_at
                    for _, _, other_no, _, saved_at, *_ in passes
                )
                fields["approved_upstream_sha256"] = APPROVAL_UNBOUND_UPSTREAM if changed_since else upstream
            PassDocument.objects.filter(pk=pk).update(**fields)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_approval_bound_to_parent_content"),
    ]

    operations = [
        migrations.AddField(
            model_name="passdocument",
            name="upstream_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.AddField(
            model_name="passdocument",
            name="approved_upstream_sha256",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.RunPython(bind_existing_approvals, migrations.RunPython.noop),
    ]
