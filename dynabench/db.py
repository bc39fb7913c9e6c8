"""Database connections of a request that waits on something else (a model's answer).

Django gives a request's connection back (to the PostgreSQL pool, ``DB_POOL_MAX_SIZE``) only when
the request ends, and an async view's database steps all run on one thread of the request's: a chat
turn that waits a minute on a model would hold a pooled connection for that minute, and a few dozen
such turns would leave the other requests of the process waiting for one. ``arelease_connections``
gives them back before the wait; the next database step takes one again.
"""

from asgiref.sync import sync_to_async
from django.db import connections


def release_connections() -> None:
    """Close (on PostgreSQL: return to the pool) this thread's open database connections that hold no
    transaction. Safe at any point outside ``transaction.atomic``; a connection inside one is kept."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.in_atomic_block:
            connection.close()


async def arelease_connections() -> None:
    """``release_connections`` on the thread that ran the request's database steps (Django's
    thread-sensitive ``sync_to_async`` thread), before an async view waits on something else."""
    await sync_to_async(release_connections)()
