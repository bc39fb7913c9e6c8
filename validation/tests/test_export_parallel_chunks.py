"""On PostgreSQL, outside a transaction, an export builds ``EXPORT_WORKERS`` chunks at once on
connections of their own: the blocks are the same, in the same order, as one chunk at a time,
and no connection of theirs is left open afterwards, whether the download ends or stops."""

import time

import pytest
from django.db import connection

from validation import export
from validation.tests.conftest import make_example

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="parallel chunks are built on PostgreSQL only"),
    pytest.mark.django_db(transaction=True),
]


def _connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


def _connections_after_close(expected: int, *, ceiling_s: float = 120.0) -> int:
    """The other connections to the database, once those just closed are gone: a server process
    leaves ``pg_stat_activity`` a moment after its client closed the connection, so a count taken
    at once can still see it. Returns the count as soon as it is ``expected``, or the last count
    after ``ceiling_s`` (a ceiling that only catches a connection left open, not a speed verdict)."""
    deadline = time.monotonic() + ceiling_s
    while (found := _connections()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_parallel_blocks_equal_sequential_blocks_and_close_their_connections(sentiment_task, annotator, monkeypatch):
    for _ in range(23):
        make_example(sentiment_task, annotator)
    rounds = [sentiment_task.current_round()]
    before = _connections()

    monkeypatch.setattr(export, "EXPORT_WORKERS", 1)
    sequential = list(export.export_lines(rounds, chunk=4))
    monkeypatch.setattr(export, "EXPORT_WORKERS", 3)
    parallel = list(export.export_lines(rounds, chunk=4))

    assert len(parallel) == 6 and parallel == sequential
    assert _connections_after_close(before) == before


def test_a_download_stopped_early_leaves_no_connection_behind(sentiment_task, annotator, monkeypatch):
    for _ in range(30):
        make_example(sentiment_task, annotator)
    before = _connections()
    monkeypatch.setattr(export, "EXPORT_WORKERS", 3)

    stream = export.export_lines([sentiment_task.current_round()], chunk=3)
    first = next(stream)
    stream.close()  # the client went away

    assert first.count(b"\n") == 3
    assert _connections_after_close(before) == before
