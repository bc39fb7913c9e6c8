"""``dynabench.db.release_connections``: before an async view waits on a model, the request's open
database connections that hold no transaction are given back (to the PostgreSQL pool), and the next
database step takes one again; a connection inside ``transaction.atomic`` is kept."""

import threading

import pytest
from django.db import connection, transaction

from dynabench.db import release_connections


def in_a_thread(call):
    """Run ``call`` in a thread of its own (outside the test's transaction), as Django's per-request thread."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return outcome["value"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="Django never closes the suite's in-memory SQLite database")
def test_an_idle_connection_is_given_back_and_taken_again_on_the_next_step(transactional_db):
    def steps():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        before = connection.connection is not None
        release_connections()
        released = connection.connection is None
        with connection.cursor() as cursor:
            cursor.execute("SELECT 2")
            again = cursor.fetchone()[0]
        return before, released, again

    assert in_a_thread(steps) == (True, True, 2)


def test_a_connection_inside_a_transaction_is_kept(transactional_db):
    def steps():
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            release_connections()
            return connection.connection is not None and not connection.needs_rollback

    assert in_a_thread(steps) is True
