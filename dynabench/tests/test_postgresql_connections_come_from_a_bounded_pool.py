"""On PostgreSQL each process borrows its connections from one pool of at most ``DB_POOL_MAX_SIZE``
(``dynabench/settings.py``): three times as many threads querying at once as the pool holds all get
their answer, waiting for a connection instead of opening one each, and the server never sees more
connections from the process than the pool holds. A request that finds no free connection within
``DB_POOL_TIMEOUT_S`` answers 503 ``database_busy``, not 500. Connections are health-checked, so one
that a PostgreSQL restart ended is replaced before a request uses it."""

import threading

import psycopg
import pytest
from django.db import connection, connections
from django.test import Client

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the pool is PostgreSQL's")


def server_connections(monitor, name: str) -> int:
    """Connections to the database ``name``, besides the monitor's own."""
    return monitor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                           (name,)).fetchone()[0]


def run_threads(target, n: int) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    return threads


def test_three_times_as_many_threads_as_the_pool_holds_all_query_on_no_more_connections(transactional_db, settings):
    options = connection.settings_dict["OPTIONS"]["pool"]
    size = options["max_size"]
    assert size == settings.DB_POOL_MAX_SIZE and connection.settings_dict["CONN_MAX_AGE"] == 0
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    name = connection.settings_dict["NAME"]
    connection.close()  # this thread's connection back in the pool too
    n = 3 * size
    start, answered, failed = threading.Barrier(n), [], []

    def query(i):
        try:
            start.wait(60)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid() FROM pg_sleep(0.2)")
                answered.append(cursor.fetchone()[0])
        except Exception as error:  # noqa: BLE001 - reported below
            failed.append(error)
        finally:
            connections.close_all()  # as Django does when a request ends: the connection goes back to the pool

    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k not in ("cursor_factory", "context")}, autocommit=True) as monitor:
        threads = run_threads(query, n)
        peak = 0
        while any(thread.is_alive() for thread in threads):
            peak = max(peak, server_connections(monitor, name))
        for thread in threads:
            thread.join()

    assert failed == []
    assert len(answered) == n
    assert len(set(answered)) <= size  # the pool's connections served them all, in turn
    assert peak <= size


def test_a_request_that_finds_no_free_connection_answers_503(transactional_db):
    options = connection.settings_dict["OPTIONS"]["pool"]
    before = dict(options)
    options.update(max_size=2, min_size=0, timeout=0.5)
    connection.close()
    connection.close_pool()  # a new pool with these options on the next use
    held, release, holders = threading.Barrier(3), threading.Event(), []

    def hold(i):
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            held.wait(60)
            release.wait(60)
        finally:
            connections.close_all()

    try:
        holders = run_threads(hold, 2)
        held.wait(60)  # both connections of the pool are out
        response = Client(raise_request_exception=False).get("/api/v1/tasks")

        assert response.status_code == 503
        assert response.json()["code"] == "database_busy"
        assert int(response["Retry-After"]) > 0
    finally:
        release.set()
        for thread in holders:
            thread.join()
        connection.close()
        options.clear()
        options.update(before)
        connection.close_pool()

    assert Client().get("/api/v1/tasks").status_code == 200
