"""A request whose PostgreSQL connection the server ends under it (a restart, an administrator, a crash)
answers 503 ``database_unavailable`` with a message, not a 500, and the next request gets a fresh
connection and its answer.

Here the request's query waits on a lock the test holds, and the server ends that connection while it
waits (``pg_terminate_backend``: SQLSTATE 57P01, what a fast shutdown sends every session); each step
waits for its own signal (the query seen waiting on the lock), never for a clock."""

import threading
import time

import psycopg
import pytest
from django.db import connection, connections
from django.test import Client

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL connection ended by the server")
HANG_S = 60  # a ceiling that only catches a hang


def monitor_connection() -> psycopg.Connection:
    params = connection.get_connection_params()
    return psycopg.connect(**{k: v for k, v in params.items() if k not in ("cursor_factory", "context")}, autocommit=True)


def test_a_request_whose_connection_the_server_ends_answers_503_and_the_next_gets_a_new_one(transactional_db):
    client = Client(raise_request_exception=False)
    name = connection.settings_dict["NAME"]
    answers = []

    def request():
        try:
            answers.append(client.get("/api/v1/tasks"))
        finally:
            connections.close_all()

    with monitor_connection() as holder, monitor_connection() as monitor:
        holder.execute("BEGIN")
        holder.execute("LOCK TABLE tasks_task IN ACCESS EXCLUSIVE MODE")
        thread = threading.Thread(target=request)
        thread.start()
        for _ in range(int(HANG_S / 0.02)):  # a ceiling that only catches a hang
            waiting = monitor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                                      (name,)).fetchall()
            if waiting:
                break
            time.sleep(0.02)
        else:
            pytest.fail("hung: the request's query never waited on the lock")
        monitor.execute("SELECT pg_terminate_backend(%s)", waiting[0])
        thread.join(HANG_S)
        holder.execute("ROLLBACK")

    (refused,) = answers
    assert refused.status_code == 503, refused.content[:500]
    assert refused.json()["code"] == "database_unavailable"
    assert "lost its connection to the database" in refused.json()["detail"] and int(refused["Retry-After"]) > 0
    assert client.get("/api/v1/tasks").status_code == 200
