"""Bulk loads refresh the planner's statistics once they commit (issue 16 item 2)."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from audit.models import Event
from physalign_site.db import BULK_ROWS, analyze_after_commit


def _reltuples() -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [Event._meta.db_table])
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_bulk_load_is_analyzed_after_it_commits_and_a_small_one_is_not():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:  # a table the planner has never seen analyzed
        cursor.execute(f"TRUNCATE {connection.ops.quote_name(Event._meta.db_table)}")
    with transaction.atomic():
        Event.objects.bulk_create([Event(verb="bench.small") for _ in range(10)])
        analyze_after_commit(Event, rows=10)
    small = _reltuples()
    with transaction.atomic():
        Event.objects.bulk_create([Event(verb="bench.load") for _ in range(BULK_ROWS)])
        analyze_after_commit(Event, rows=BULK_ROWS)
        assert _reltuples() == small  # nothing runs before the load commits
    assert _reltuples() == BULK_ROWS + 10
