"""A client that stops reading an export leaves no open transaction or cursor on the database."""

import pytest
from django.db import connection

from validation import export
from validation.tests.conftest import make_example


def _open_on_database() -> tuple[bool, int]:
    """(a transaction is open on this connection, server-side cursors open in this session)."""
    if connection.vendor == "postgresql":
        from psycopg.pq import TransactionStatus

        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_cursors")
            cursors = cursor.fetchone()[0]
        return connection.connection.info.transaction_status != TransactionStatus.IDLE, cursors
    return connection.connection.in_transaction, 0


@pytest.mark.django_db(transaction=True)
def test_a_download_stopped_after_the_first_block_leaves_nothing_open(client, sentiment_task, annotator, owner, monkeypatch):
    for _ in range(6):
        make_example(sentiment_task, annotator)
    client.force_login(owner)
    monkeypatch.setattr(export, "EXPORT_CHUNK", 2)

    response = client.get("/tasks/sentiment/rounds/1/export.jsonl")
    stream = iter(response.streaming_content)
    first = next(stream)
    connection.ensure_connection()
    assert _open_on_database() == (False, 0)  # between blocks nothing is held
    response.close()  # what the server does when the client goes away

    connection.ensure_connection()
    assert first.count(b"\n") == 2
    assert _open_on_database() == (False, 0)
    assert not connection.in_atomic_block
