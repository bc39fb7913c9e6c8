"""What the platform answers while a service it depends on is out: a 503 (or 507) with a clear message.

Redis holds the cache, the cached sessions, the rate windows, the API's throttles and the RQ queues;
while it cannot be reached (``redis.exceptions.ConnectionError`` or ``TimeoutError``, Redis still
loading after a restart included), any request that needs it answers 503 ``redis_unavailable``.
A PostgreSQL connection pool with no free connection within its timeout
(``psycopg_pool.PoolTimeout``, ``DB_POOL_TIMEOUT_S``: every connection busy, or none can be opened
while the server is down) answers 503 ``database_busy``; a request whose connection the server ended
or lost (a restart: ``AdminShutdown``, a crash, a refused connection: ``DATABASE_GONE_SQLSTATES``)
answers 503 ``database_unavailable``. Nothing has to be restarted: the next request after the
service is back opens a new connection.
A full disk (or disk quota) under the storage while an upload is written (``OSError`` ``ENOSPC`` or
``EDQUOT``, ``dynabench/filestore.py``) answers 507 ``storage_full``: the services that store
uploads remove what they wrote (``filestore.AllOrNothing``) and keep no record, so the upload can be
sent again once an operator has made room.

The guard sits at the edge, as the project's ``handler500`` (``dynabench/urls.py``): Django calls
it for every exception no view or middleware handled, with the exception being handled (under
ASGI as under WSGI: asgiref keeps it when the handler runs in a thread), so a view, DRF's
throttles and a middleware's ``process_response`` are covered alike. The answer:

- ``/api/...``: JSON ``{"code", "detail"}``, the API's error shape;
- an htmx request: a short fragment with ``HX-Reswap: none``, so the page keeps what the user
  typed, and ``static/js/request-errors.js`` shows the fragment's message beside the form;
- any other page: a page of its own (``templates/unavailable.html``) that reads nothing from the
  session, the user or the cache.

Each comes with ``Retry-After``, except a full storage. Anything else is Django's own ``server_error`` (500).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import redis.exceptions
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.html import escape
from django.views import defaults

from dynabench.filestore import is_storage_full

#: What redis-py raises when the server is down, unreachable, too slow or still loading its data.
REDIS_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
#: Seconds a client is asked to wait before trying again (``Retry-After``).
RETRY_AFTER_S = 30


@dataclass(frozen=True)
class Outage:
    """A service the request needed was out: ``code`` (the API's ``code``), what to tell the user, the
    HTTP ``status``, the page's ``title`` and the ``Retry-After`` seconds (None: none sent, as when
    only an operator can end it)."""

    code: str
    message: str
    status: int = 503
    title: str = "Temporarily unavailable"
    retry_after_s: int | None = RETRY_AFTER_S


REDIS_UNAVAILABLE = Outage(
    "redis_unavailable",
    "The platform cannot reach its Redis server (cache, sessions, queues) just now, so this request could not "
    "be completed. Try again in a minute: the platform recovers by itself as soon as Redis is back.",
)
DATABASE_BUSY = Outage(
    "database_busy",
    "The database gave this server no connection in time (every connection busy, or the database server "
    "restarting), so this request could not be completed. Try again in a moment.",
)

DATABASE_UNAVAILABLE = Outage(
    "database_unavailable",
    "The platform lost its connection to the database (the database server restarting or out), so this request "
    "could not be completed. Try again in a moment: the platform recovers by itself as soon as the database is back.",
)
#: SQLSTATEs of a PostgreSQL connection that ended under the request: class 08 (connection exceptions),
#: the server shutting down (57P01 by an administrator, 57P02 after a crash), starting or stopping (57P03).
DATABASE_GONE_SQLSTATES = ("57P01", "57P02", "57P03")

STORAGE_FULL = Outage(
    "storage_full",
    "The server's storage is full, so what you sent could not be stored; nothing of it was kept. Try again "
    "later: the platform's administrators have to make room first.",
    status=507, title="Storage full", retry_after_s=None,
)


def _is_pool_timeout(error: BaseException) -> bool:
    try:
        from psycopg_pool import PoolTimeout
    except ImportError:  # no pool installed: no pool can time out
        return False
    return isinstance(error, PoolTimeout)


def _is_database_gone(error: BaseException) -> bool:
    """A PostgreSQL connection that failed or was ended under the request: psycopg's ``OperationalError``
    with no SQLSTATE (the client saw the connection fail or close) or with one of class 08 or
    ``DATABASE_GONE_SQLSTATES``. A statement timeout, a lock not available or a server out of room
    (other ``OperationalError``s) is not."""
    try:
        import psycopg
    except ImportError:  # no PostgreSQL driver: no PostgreSQL connection to lose
        return False
    if not isinstance(error, psycopg.OperationalError):
        return False
    state = getattr(error, "sqlstate", None)
    return state is None or state.startswith("08") or state in DATABASE_GONE_SQLSTATES


def outage_of(error: BaseException | None) -> Outage | None:
    """Return the outage ``error`` (or an exception it was raised from or during) stands for, or None
    when it is an ordinary error. Django wraps driver errors (``django.db.OperationalError`` from a
    ``PoolTimeout``), hence the walk along ``__cause__`` and ``__context__``."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, REDIS_ERRORS):
            return REDIS_UNAVAILABLE
        if _is_pool_timeout(error):
            return DATABASE_BUSY
        if _is_database_gone(error):
            return DATABASE_UNAVAILABLE
        if is_storage_full(error):
            return STORAGE_FULL
        error = error.__cause__ or error.__context__
    return None


def unavailable_response(request, outage: Outage) -> HttpResponse:
    """The answer to ``request`` for ``outage`` (``outage.status``: 503, or 507 for a full storage): JSON
    for the API, a fragment for htmx, else a page."""
    if request.path.startswith("/api/"):
        response = JsonResponse({"code": outage.code, "detail": outage.message}, status=outage.status)
    elif request.headers.get("HX-Request"):
        response = HttpResponse(
            f'<p class="error" role="alert" data-request-error="{outage.code}">{escape(outage.message)}</p>', status=outage.status,
        )
        response["HX-Reswap"] = "none"  # keep the page (and the form the user filled) as it is
    else:
        response = HttpResponse(render_to_string("unavailable.html", {"outage": outage, "retry_after_s": outage.retry_after_s}),
                                status=outage.status)
    if outage.retry_after_s is not None:
        response["Retry-After"] = str(outage.retry_after_s)
    return response


def server_error(request, *args, **kwargs):
    """The project's ``handler500``: a 503 or 507 (``unavailable_response``) when the unhandled exception
    is an outage (``outage_of``), Django's ``server_error`` otherwise. Django has logged the exception already."""
    outage = outage_of(sys.exc_info()[1])
    if outage is None:
        return defaults.server_error(request, *args, **kwargs)
    return unavailable_response(request, outage)
