"""Running the real migrations backwards and forwards on the test database, for tests of data-moving migrations."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import StateApps


def migrate_to(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def apps_at(executor: MigrationExecutor, nodes: list[tuple[str, str]]) -> StateApps:
    return executor.loader.project_state(nodes).apps


def migrate_to_latest() -> StateApps:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(leaves)
    return executor.loader.project_state(leaves).apps


@pytest.fixture
def back_to_latest():
    """Whatever the test does to the schema, the database ends at the latest migrations for the next test."""
    yield
    migrate_to_latest()
