"""PostgreSQL backends terminated mid-request (issue 32, §2): never a 500. A read runs once more on a fresh
connection; a write whose transaction did not commit answers 503 with ``Retry-After`` and leaves no
half-written version, and the same write sent again is stored once.

The backend is terminated the way an operator or a failover does it: ``pg_terminate_backend`` from a second
connection, on the test's own database only, right before a chosen statement of the view."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import pytest
from django.db import connection
from django.test import Client

from annotation.models import PassDocument, PassDocumentVersion
from tests.annotation.test_api import client_for, pass1_doc, pass_url
from tests.factories import ParentProblemFactory, PassDocumentFactory, SourceFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _terminate_own_backend() -> None:
    """Terminate the backend of Django's connection from another one, and wait until it is gone."""
    pid = connection.connection.info.backend_pid
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        row = other.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid = %s",
            (pid,),
        ).fetchone()
    assert row == (True,)


@contextmanager
def terminated_before(chosen: Callable[[str], bool], times: int = 1) -> Iterator[list[str]]:
    """Terminate the backend right before each of the first ``times`` statements that ``chosen`` picks; the
    statement then runs on the dead connection (as it would have, had the backend died a moment earlier)."""
    killed: list[str] = []

    def wrapper(execute, sql, params, many, context):
        if len(killed) < times and chosen(sql):
            killed.append(sql)
            _terminate_own_backend()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield killed


@pytest.fixture
def pass1(annotator) -> PassDocument:
    parent = ParentProblemFactory(problem_id="prob_fault", source=SourceFactory(name="SeePhys"))
    return PassDocumentFactory(
        parent=parent, pass_no=1, document=pass1_doc(parent.problem_id), updated_by=annotator
    )


def _writes() -> Callable[[str], bool]:
    """The second INSERT or UPDATE of the request: one write of its transaction is done, the rest is not."""
    seen = []

    def chosen(sql: str) -> bool:
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
            seen.append(sql)
            return len(seen) == 2
        return False

    return chosen


def _stored(doc: PassDocument) -> tuple:
    doc.refresh_from_db()
    history = PassDocumentVersion.objects.filter(pass_document=doc).order_by("version")
    return (
        doc.version,
        doc.document_sha256,
        doc.document,
        list(history.values_list("document_sha256", flat=True)),
    )


def test_a_save_cut_off_mid_transaction_answers_503_stores_nothing_and_the_retry_stores_it_once(
    annotator, pass1
):
    pid = pass1.parent.problem_id
    before = _stored(pass1)
    client = client_for(annotator)
    body = {"document": pass1_doc(pid, ambiguities=[{"id": "u001"}])}
    with terminated_before(_writes()) as killed:
        response = client.put(pass_url(pid, 1), body, format="json", headers={"If-Match": str(before[0])})
    assert len(killed) == 1
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response.json()["code"] == "database_unavailable"
    assert "nothing was saved" in response.json()["message"]
    assert _stored(pass1) == before  # no half-written version: the first write was rolled back with it

    again = client.put(pass_url(pid, 1), body, format="json", headers={"If-Match": str(before[0])})
    assert again.status_code == 200, again.content
    version, sha, document, history = _stored(pass1)
    assert version == before[0] + 1 and document == body["document"]
    assert history[-1] == sha and history.count(sha) == 1  # stored once, as the history's newest state


def test_a_read_cut_off_is_run_again_on_a_fresh_connection(annotator, pass1):
    pid = pass1.parent.problem_id
    client = client_for(annotator)
    with terminated_before(lambda sql: "annotation_passdocument" in sql) as killed:
        response = client.get(pass_url(pid, 1))
    assert len(killed) == 1
    assert response.status_code == 200
    assert response.json()["document"] == pass1.document


def test_a_read_cut_off_twice_answers_503_with_retry_after(annotator, pass1):
    pid = pass1.parent.problem_id
    client = client_for(annotator)
    with terminated_before(lambda sql: "annotation_passdocument" in sql, times=2) as killed:
        response = client.get(pass_url(pid, 1))
    assert len(killed) == 2  # the view, then its one retry
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response.json()["code"] == "database_unavailable"
    assert client.get(pass_url(pid, 1)).status_code == 200  # and then it serves again


def test_a_page_cut_off_in_a_middleware_answers_503_with_retry_after_never_500(annotator, pass1):
    """The first statement on the problem's table is the blind rule's middleware, before the view: the 500
    handler turns it into the same 503 page."""
    client = Client(raise_request_exception=False)
    client.force_login(annotator)
    with terminated_before(lambda sql: "annotation_parentproblem" in sql) as killed:
        response = client.get(f"/problems/{pass1.parent.problem_id}/")
    assert len(killed) == 1
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert b"The database did not answer" in response.content
    assert client.get(f"/problems/{pass1.parent.problem_id}/").status_code == 200  # and then it serves again


def test_an_ordinary_database_error_is_still_an_error_not_a_503(annotator, pass1):
    from django.db import IntegrityError, OperationalError

    from physalign_site.db import database_unavailable

    with pytest.raises(OperationalError) as timeout:
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = 1; SELECT pg_sleep(1)")
    assert timeout.value.__cause__.sqlstate == "57014"  # query_canceled: the server's own reason
    assert database_unavailable(timeout.value) is False
    assert database_unavailable(IntegrityError("duplicate key")) is False
    assert connection.is_usable()  # and the connection was left alone
