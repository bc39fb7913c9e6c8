"""Statements of the hot paths, written once per database vendor and run without the ORM.

Writing an example runs eleven statements on PostgreSQL. On the 2-core machine the ORM spent
longer compiling each of them (0.3 to 2 ms: an ``Exists`` annotation or a 20-field insert costs
most) than the database spent running it (0.1 to 0.3 ms as a prepared statement), so the
fixed-shape statements of that path are built here once, from the models' own ``_meta`` (table
and column names quoted by the connection), and kept by their name. They are plain SQL that
PostgreSQL and SQLite both run. ``load_row`` turns their rows into model instances as a
queryset would, and ``insert`` inserts one as ``save()`` would (signals included). Everything
else goes through the ORM. Measured by ``benchmarks/annotation.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db import connection
from django.db.models.signals import post_save, pre_save

_BUILT: dict[tuple[str, str], str] = {}
_LOADERS: dict[tuple, tuple[list[str], list]] = {}  # (vendor, model) or (vendor, "returning", model)


def table(model) -> str:
    """The quoted table name of ``model``."""
    return connection.ops.quote_name(model._meta.db_table)


def column(model, name: str) -> str:
    """The quoted column of ``model``'s field ``name`` (a field name or an attname like ``round_id``)."""
    return connection.ops.quote_name(model._meta.get_field(name).column)


def qualified(model, name: str) -> str:
    """The quoted ``table.column`` of ``model``'s field ``name``, for statements that join tables."""
    return f"{table(model)}.{column(model, name)}"


def select_list(*models) -> str:
    """The qualified columns of every concrete field of each of ``models``, in ``_meta`` order,
    as one ``SELECT`` list; ``load_row`` turns a row of it back into instances."""
    return ", ".join(qualified(model, field.attname) for model in models for field in model._meta.concrete_fields)


def _converters(fields) -> list:
    """``(index, functions, column)`` for each of ``fields`` whose database value the ORM converts
    (the backend's converters, then the field's ``from_db_value``)."""
    found = []
    for i, field in enumerate(fields):
        column_ = field.get_col(field.model._meta.db_table)
        functions = connection.ops.get_db_converters(column_) + column_.get_db_converters(connection)
        if functions:
            found.append((i, functions, column_))
    return found


def _convert(values: list, converters: list) -> list:
    for i, functions, column_ in converters:
        value = values[i]
        for function in functions:
            value = function(value, column_, connection)
        values[i] = value
    return values


def _loader(model) -> tuple[list[str], list]:
    """``model``'s attnames and the converters of its columns (``_converters``): built once per vendor."""
    key = (connection.vendor, model)
    found = _LOADERS.get(key)
    if found is None:
        fields = model._meta.concrete_fields
        found = _LOADERS[key] = ([field.attname for field in fields], _converters(fields))
    return found


def load_row(row: Sequence, *models) -> tuple:
    """One instance of each of ``models`` from ``row``, a row of ``select_list(*models)``.

    Values are converted as a queryset converts them (JSON decoded, SQLite's dates parsed) and
    the instances are built by ``Model.from_db``, so they behave as the ORM's own (saved state,
    deferred nothing). Returns a tuple of ``len(models)`` instances."""
    found, start = [], 0
    for model in models:
        names, converters = _loader(model)
        values = _convert(list(row[start:start + len(names)]), converters)
        found.append(model.from_db(connection.alias, names, values))
        start += len(names)
    return tuple(found)


def fetch_instances(sql: str, params: Sequence, *models) -> list[tuple]:
    """Run ``sql`` (selecting ``select_list(*models)``) and return each row as ``load_row`` tuples."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [load_row(row, *models) for row in cursor.fetchall()]


def insert(instance) -> None:
    """Insert ``instance``, a new row of a model without parent models, as ``instance.save()``
    would: ``pre_save`` and ``post_save`` (``created=True``) are sent, each field's value is
    prepared as the ORM prepares it (``pre_save``, so ``auto_now_add`` is set; then
    ``get_db_prep_save``), and the fields the database returns (the primary key, generated
    columns) are set on ``instance``, which is then saved state. The ``INSERT ... RETURNING``
    is built once per model and vendor: the ORM compiled it on every save.

    Raises ``IntegrityError`` as ``save()`` does (the caller's transaction decides)."""
    model = type(instance)
    meta = model._meta
    if meta.parents:
        raise TypeError(f"hotsql.insert does not handle {meta.label}'s parent models; use save().")
    fields = [f for f in meta.local_concrete_fields if not f.generated and f not in meta.db_returning_fields]
    returning = list(meta.db_returning_fields)

    def build() -> str:
        return (
            f"INSERT INTO {table(model)} ({', '.join(column(model, f.attname) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {', '.join(column(model, f.attname) for f in returning)}"
        )

    sql = statement(f"insert:{meta.label}", build)
    pre_save.send(sender=model, instance=instance, raw=False, using=connection.alias, update_fields=None)
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = list(cursor.fetchone())
    key = (connection.vendor, "returning", model)
    if key not in _LOADERS:
        _LOADERS[key] = ([f.attname for f in returning], _converters(returning))
    for field, value in zip(returning, _convert(row, _LOADERS[key][1])):
        setattr(instance, field.attname, value)
    instance._state.adding, instance._state.db = False, connection.alias
    post_save.send(sender=model, instance=instance, created=True, update_fields=None, raw=False, using=connection.alias)


def keyed_id_sql(model, owner: str, key: str = "submission_key") -> str:
    """``SELECT id`` of the ``model`` row of one ``owner`` (a user field) with one submission
    ``key`` (parameters: the owner's id, the key). The submission keys' unique constraints are
    partial (``UNIQUE (owner, key) WHERE key <> ''``); the statement repeats that condition as a
    literal, so that a prepared statement's generic plan, made for any key, can use the index.
    Without it (or with the ``''`` as a parameter, as the ORM writes it), the plan reads every
    row of the owner: 0.07 ms after 350 examples against 0.01 ms, growing with each one."""
    return (
        f"SELECT {column(model, 'id')} FROM {table(model)} WHERE {column(model, owner)} = %s "
        f"AND {column(model, key)} = %s AND {column(model, key)} <> ''"
    )


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
