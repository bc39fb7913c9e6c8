"""``/metrics`` reads the PostgreSQL server's client connections and its ``max_connections`` at each
scrape ("too many clients" is the first reaching the second); on SQLite both are declared without a value."""

from django.db import connection

from dynabench.tests.metrics_support import scrape, value


def test_it_reads_the_servers_connections_against_its_limit(client, db):
    text = scrape(client)

    assert "# TYPE dynabench_db_server_connections gauge" in text
    if connection.vendor == "postgresql":
        assert value(text, "dynabench_db_server_connections") >= 1
        assert value(text, "dynabench_db_server_max_connections") >= value(text, "dynabench_db_server_connections")
    else:
        assert value(text, "dynabench_db_server_connections") is None
