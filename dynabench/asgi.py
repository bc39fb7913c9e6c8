"""The web process's ASGI entry point: ``make run`` serves it with gunicorn's uvicorn workers.

Each request goes one of two ways, chosen by the view its URL resolves to:

- **async views** (``async def``: chat streams and side by side, endpoint answers, image
  generation) run on Django's ASGI handler in the process's event loop. While they wait on a
  model they hold no thread, so two hundred people waiting on models cost two hundred sockets and
  coroutines, not two hundred threads;
- **every other view** runs on a pool of ``WEB_THREADS`` threads per process (a2wsgi's WSGI
  bridge), exactly as under a threaded WSGI server: a bounded pool, each request on one thread
  from start to end. (Django's own ASGI handler would give every sync request a thread of its own,
  unbounded, and hop between that thread and the loop for each middleware.)

Async views still run their short database steps with ``sync_to_async`` (Django's per-request
thread), but not the wait on the model.

Lifespan events are answered here; nothing runs at start-up beyond Django's set-up (the model
warm-up starts from ``TasksConfig.ready``).
"""

import os
from functools import lru_cache

from a2wsgi import WSGIMiddleware
from asgiref.sync import iscoroutinefunction
from django.core.asgi import get_asgi_application
from django.urls import Resolver404, get_resolver

from dynabench.wsgi import application as wsgi_application  # sets the torch threads, then Django up

django_asgi = get_asgi_application()


def web_threads(environ=os.environ) -> int:
    """``WEB_THREADS`` (default 4): threads per process for the sync views."""
    return max(1, int(environ.get("WEB_THREADS", "4")))


threaded = WSGIMiddleware(wsgi_application, workers=web_threads())


@lru_cache(maxsize=4096)
def is_async_view(path: str) -> bool:
    """True when ``path`` resolves to an async view (a coroutine function, or a class-based view
    Django marks ``view_is_async``); False for sync views and unknown paths (Django's 404). Cached
    per path (URL patterns do not change while a process runs)."""
    try:
        match = get_resolver().resolve(path)
    except Resolver404:
        return False
    return iscoroutinefunction(match.func) or bool(getattr(match.func, "view_is_async", False))


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope, receive, send):
    """The ASGI application: lifespan here, async views on Django's ASGI handler, the rest on threads."""
    if scope["type"] == "lifespan":
        return await _lifespan(receive, send)
    if scope["type"] == "http" and is_async_view(scope["path"]):
        return await django_asgi(scope, receive, send)
    return await threaded(scope, receive, send)
