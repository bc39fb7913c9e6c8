"""``dynabench.asgi.SyncViews`` runs each sync view in its pool thread's own context, as a threaded
WSGI server does: what Django keeps per context (``django.core.cache.caches`` is an asgiref
``Local``) lasts from one request to the next on a thread, so a thread's cache client and its Redis
connection are made once, not once per request."""

import asyncio

from asgiref.testing import ApplicationCommunicator
from django.core.cache import caches

from dynabench.asgi import SyncViews


def _scope():
    return {"type": "http", "http_version": "1.1", "method": "GET", "path": "/", "root_path": "", "query_string": b"",
            "headers": [(b"host", b"testserver")], "scheme": "http", "server": ("testserver", 80), "client": ("127.0.0.1", 5000)}


def test_one_pool_thread_reuses_its_cache_client_from_request_to_request():
    clients = []

    def view(environ, start_response):
        clients.append(caches["default"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    async def requests(app, n):
        for _ in range(n):
            communicator = ApplicationCommunicator(app, _scope())
            await communicator.send_input({"type": "http.request", "body": b""})
            assert (await communicator.receive_output(timeout=30))["status"] == 200
            await communicator.receive_output(timeout=30)

    asyncio.run(requests(SyncViews(view, threads=1), 3))

    assert len(clients) == 3 and clients[0] is clients[1] is clients[2]
