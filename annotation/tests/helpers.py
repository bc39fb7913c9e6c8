"""Helpers of the annotation tests: read the signed context token off a rendered page; run
submissions at the same moment from several threads."""

import re
import threading

from django.db import connections

HTMX = {"HTTP_HX_REQUEST": "true"}


def token_of(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def at_once(call, n: int) -> None:
    """Run ``call(i)`` for i in ``range(n)`` in ``n`` threads released together (a barrier), each
    on its own database connection, closed afterwards; return when all have finished."""
    start = threading.Barrier(n)

    def run(i):
        try:
            start.wait(10)
            call(i)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
