"""The web process's ASGI entry point: ``make run`` serves it with gunicorn's uvicorn workers.

Each request goes one of two ways, chosen by the view its URL resolves to:

- **async views** (``async def``: chat streams and side by side, endpoint answers, image
  generation) run on Django's ASGI handler in the process's event loop. While they wait on a
  model they hold no thread, so two hundred people waiting on models cost two hundred sockets and
  coroutines, not two hundred threads;
- **every other view** runs on a pool of ``WEB_THREADS`` threads per process, exactly as under a
  threaded WSGI server: a bounded pool, each request on one thread from start to end (Django's
  own ASGI handler would give every sync request a thread of its own, unbounded, and hop between
  that thread and the loop for each middleware). ``SyncViews`` hands a request with a small body
  (every page and form) to a thread once and gets the whole answer back once; a large body (an
  upload) goes through a2wsgi's bridge, which feeds the view the body as it arrives so that an
  upload over its limit is refused before it is read (``dynabench.upload_limits``).

Async views still run their short database steps with ``sync_to_async`` (Django's per-request
thread), but not the wait on the model.

Lifespan events are answered here; nothing runs at start-up beyond Django's set-up (the model
warm-up starts from ``TasksConfig.ready``).
"""

import asyncio
import io
import itertools
import os
from functools import lru_cache

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi import build_environ
from asgiref.sync import iscoroutinefunction
from django.core.asgi import get_asgi_application
from django.urls import Resolver404, get_resolver

from dynabench.wsgi import application as wsgi_application  # sets the torch threads, then Django up

django_asgi = get_asgi_application()


def web_threads(environ=os.environ) -> int:
    """``WEB_THREADS`` (default 4): threads per process for the sync views."""
    return max(1, int(environ.get("WEB_THREADS", "4")))


SMALL_BODY_BYTES = 64 * 1024
"""A request body up to this size (a form post, a JSON call) is read before the view runs."""


def _declared_length(scope) -> int | None:
    """The request's ``Content-Length`` in bytes: 0 when it has neither that nor a chunked body,
    None when the length is not told (chunked) or malformed."""
    length, chunked = None, False
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            length = value
        elif name == b"transfer-encoding":
            chunked = True
    if length is None:
        return None if chunked else 0
    try:
        return int(length)
    except ValueError:
        return None


class SyncViews:
    """An ASGI application that runs a WSGI application (Django's sync views) on a bounded pool of
    ``threads`` threads.

    A request whose declared body is at most ``SMALL_BODY_BYTES`` is read on the event loop, then
    handed to a pool thread once, to run in that thread's own context (so that what Django keeps
    per context, such as its cache clients, lasts from one request to the next on that thread);
    the thread runs the view and renders the whole response, and the loop sends it: one hand-off each way, nothing waits on the loop while the view runs. A
    streaming response (``StreamingHttpResponse``, ``FileResponse``) is iterated on that one
    thread from start to end (its database cursors stay on their connection's thread), each chunk
    sent before the next is made. A larger or chunked body goes to a2wsgi's ``WSGIMiddleware``
    on the same pool, which reads the body as the view asks for it.
    """

    def __init__(self, app, *, threads: int):
        self.app = app
        self.large = WSGIMiddleware(app, workers=threads)
        self.pool = self.large.executor

    async def __call__(self, scope, receive, send) -> None:
        length = _declared_length(scope)
        if length is None or length > SMALL_BODY_BYTES:
            return await self.large(scope, receive, send)
        body = bytearray()
        more = length > 0
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        loop = asyncio.get_running_loop()
        environ = build_environ(scope, io.BytesIO(bytes(body)))

        def send_from_thread(message) -> None:
            asyncio.run_coroutine_threadsafe(send(message), loop).result()

        # The view runs in the pool thread's own context, not a copy of this task's: Django keeps
        # per-context state there (``caches``, an asgiref ``Local``), so that a thread's cache client
        # and its Redis connection live from one request to the next, as under a threaded WSGI server.
        whole = await loop.run_in_executor(self.pool, self._respond, environ, send_from_thread)
        if whole is not None:
            start, content = whole
            await send(start)
            await send({"type": "http.response.body", "body": content})

    def _respond(self, environ, send_from_thread):
        """Run the view on this thread. Return ``(start message, body bytes)``, or None when the
        response streamed (sent from here with ``send_from_thread``)."""
        started, written = {}, []

        def start_response(status, headers, exc_info=None):
            started.update(type="http.response.start", status=int(status.split(" ", 1)[0]),
                           headers=[(n.strip().lower().encode("latin1"), v.strip().encode("latin1")) for n, v in headers])
            return written.append

        iterable = self.app(environ, start_response)
        try:
            if not getattr(iterable, "streaming", False):
                return started, b"".join([*written, *iterable])
            send_from_thread(started)
            for chunk in itertools.chain(written, iterable):
                send_from_thread({"type": "http.response.body", "body": chunk, "more_body": True})
            send_from_thread({"type": "http.response.body", "body": b""})
            return None
        finally:
            getattr(iterable, "close", lambda: None)()


threaded = SyncViews(wsgi_application, threads=web_threads())


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
