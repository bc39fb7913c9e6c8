"""``dynabench.asgi.SyncViews`` runs a sync (WSGI) view on a pool thread, never on the event loop:
a small body is read first and the whole answer comes back at once; a streaming answer is made on
one thread from its first chunk to its last; a large body reaches the view as it arrives, so that
the view can refuse it before the rest is sent."""

import asyncio
import threading

from asgiref.testing import ApplicationCommunicator

from dynabench.asgi import SMALL_BODY_BYTES, SyncViews


def _scope(method="POST", length=None):
    headers = [(b"host", b"testserver")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http", "http_version": "1.1", "method": method, "path": "/write/", "root_path": "",
            "query_string": b"", "headers": headers, "scheme": "http", "server": ("testserver", 80), "client": ("127.0.0.1", 5000)}


async def _answer(communicator) -> tuple[dict, list[dict]]:
    start = await communicator.receive_output(timeout=30)
    bodies = [await communicator.receive_output(timeout=30)]
    while bodies[-1].get("more_body"):
        bodies.append(await communicator.receive_output(timeout=30))
    return start, bodies


def test_a_small_body_is_read_first_and_the_answer_comes_back_whole_from_a_pool_thread():
    seen = {}

    def view(environ, start_response):
        seen["thread"] = threading.current_thread().name
        seen["body"] = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", "yes")])
        return [b"written ", b"once"]

    async def request():
        communicator = ApplicationCommunicator(SyncViews(view, threads=2), _scope(length=9))
        await communicator.send_input({"type": "http.request", "body": b"text=", "more_body": True})
        await communicator.send_input({"type": "http.request", "body": b"good", "more_body": False})
        return await _answer(communicator)

    start, bodies = asyncio.run(request())

    assert seen["body"] == b"text=good" and seen["thread"] != threading.current_thread().name
    assert start["status"] == 201 and (b"x-seen", b"yes") in start["headers"]
    assert [b["body"] for b in bodies] == [b"written once"]


class _Streaming:
    """A WSGI iterable marked ``streaming`` as Django's ``StreamingHttpResponse`` is."""

    streaming = True

    def __init__(self, threads):
        self.threads = threads

    def __iter__(self):
        for n in range(5):
            self.threads.append(threading.get_ident())
            yield f"line {n}\n".encode()


def test_a_streaming_answer_is_made_on_one_thread_chunk_after_chunk():
    threads = []

    def view(environ, start_response):
        threads.append(threading.get_ident())
        start_response("200 OK", [("Content-Type", "application/jsonl")])
        return _Streaming(threads)

    start, bodies = asyncio.run(_answer(ApplicationCommunicator(SyncViews(view, threads=4), _scope(method="GET"))))

    assert start["status"] == 200
    assert b"".join(b["body"] for b in bodies) == b"".join(f"line {n}\n".encode() for n in range(5))
    assert len(set(threads)) == 1 and threads[0] != threading.get_ident()


def test_a_large_body_reaches_the_view_as_it_arrives_so_it_can_be_refused_early():
    def view(environ, start_response):
        first = environ["wsgi.input"].read(1024)
        start_response("413 Payload Too Large", [("Content-Type", "text/plain")])
        return [f"refused after {len(first)} bytes".encode()]

    async def request():
        communicator = ApplicationCommunicator(SyncViews(view, threads=2), _scope(length=50 * SMALL_BODY_BYTES))
        await communicator.send_input({"type": "http.request", "body": b"x" * 1024, "more_body": True})  # the rest never comes
        return await _answer(communicator)

    start, bodies = asyncio.run(request())

    assert start["status"] == 413 and b"".join(b["body"] for b in bodies) == b"refused after 1024 bytes"
