"""Moving Event from annotation to audit keeps every row: ids, actors, verbs and JSON, on a database with rows."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

BEFORE = ("annotation", "0005_parent_kit_source")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_events_written_before_the_move_are_read_after_it():
    old = apps_at(migrate_to([BEFORE, ("audit", None)]), [BEFORE])
    user = old.get_model("auth", "User").objects.create(username="writer")
    events = old.get_model("annotation", "Event")
    first = events.objects.create(
        actor=user,
        verb="pass.approved",
        object_type="annotation.passdocument",
        object_id="7",
        before={"status": "submitted"},
        after={"status": "approved"},
    )
    second = events.objects.create(
        actor=None,
        verb="import.created",
        object_type="annotation.importjob",
        object_id="3",
        before=None,
        after={"rows": [1, 2]},
    )

    new = migrate_to_latest()
    moved = new.get_model("audit", "Event")
    assert moved._meta.db_table == "audit_event"
    rows = {e.pk: e for e in moved.objects.all()}
    assert set(rows) == {first.pk, second.pk}
    assert rows[first.pk].actor_id == user.pk and rows[first.pk].verb == "pass.approved"
    assert rows[first.pk].before == {"status": "submitted"} and rows[first.pk].after == {"status": "approved"}
    assert rows[second.pk].actor_id is None and rows[second.pk].after == {"rows": [1, 2]}
    assert "annotation_event" not in connection.introspection.table_names()
    content_types = new.get_model("contenttypes", "ContentType")
    assert not content_types.objects.filter(app_label="annotation", model="event").exists()

    # the live model reads the same rows and still refuses to rewrite them
    from audit.models import Event

    assert Event.objects.get(pk=first.pk).object_id == "7"
    with pytest.raises(TypeError):
        Event.objects.filter(pk=first.pk).update(verb="forged")
