"""Query plans on PostgreSQL, for the tests that check a statement can use an index."""

import re

from django.db import connection


def generic_plan(sql: str, params: list) -> str:
    """The text of PostgreSQL's generic plan of ``sql`` (one ``%s`` per item of ``params``): the
    plan a prepared statement settles on after its first executions (``prepare_threshold`` in
    the settings), made without looking at the parameters' values.
    Runs inside the caller's transaction (``SET LOCAL``)."""
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub(r"%s", lambda _: f"${next(numbered)}", sql)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE plan_probe AS {prepared}")
        try:
            # The values written into the statement: EXECUTE's own parameters would have no type.
            values = connection.ops.compose_sql(", ".join(["%s"] * len(params)), params)
            cursor.execute(f"EXPLAIN EXECUTE plan_probe({values})")
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE plan_probe")
