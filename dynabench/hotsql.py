"""Statements of the hot paths, written once per database vendor and run without the ORM.

Writing an example runs about fifteen statements. On the 2-core machine the ORM spent longer
compiling each of them (0.5 to 2 ms: an ``Exists`` annotation costs most) than the database spent
running it (0.2 to 0.5 ms), so the few fixed-shape statements of that path are built here once,
from the models' own ``_meta`` (table and column names quoted by the connection), and kept by
their name. They are plain SQL that PostgreSQL and SQLite both run. Everything else goes through
the ORM. Measured by ``benchmarks/annotation.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db import connection

_BUILT: dict[tuple[str, str], str] = {}


def table(model) -> str:
    """The quoted table name of ``model``."""
    return connection.ops.quote_name(model._meta.db_table)


def column(model, name: str) -> str:
    """The quoted column of ``model``'s field ``name`` (a field name or an attname like ``round_id``)."""
    return connection.ops.quote_name(model._meta.get_field(name).column)


def qualified(model, name: str) -> str:
    """The quoted ``table.column`` of ``model``'s field ``name``, for statements that join tables."""
    return f"{table(model)}.{column(model, name)}"


def statement(name: str, build: Callable[[], str]) -> str:
    """The SQL text called ``name``, built by ``build()`` the first time it is asked for on this
    database vendor (names are per call site: one name, one shape)."""
    key = (connection.vendor, name)
    sql = _BUILT.get(key)
    if sql is None:
        sql = _BUILT[key] = build()
    return sql


def fetch_one(sql: str, params: Sequence) -> tuple | None:
    """Run ``sql`` with ``params`` on the default connection; return its first row or None."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def execute(sql: str, params: Sequence) -> int:
    """Run ``sql`` (an ``UPDATE`` or ``INSERT``) with ``params``; return the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
