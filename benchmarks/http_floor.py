"""Benchmark: what an HTTP client costs by itself, against a trivial WSGI app behind gunicorn.

One command::

    .venv/bin/python benchmarks/http_floor.py [--calls 2000]

Starts gunicorn (2 workers x 4 threads, gthread, as ``benchmarks/annotation.py`` does) serving
a WSGI app that reads the body and answers 2,000 bytes, then posts the submit request's shape
(a form body, session and CSRF cookies, ``HX-Request``, ``X-CSRFToken``) with a
``requests.Session`` and with a keep-alive ``http.client`` connection, alternating call by call,
and prints the p50 of each and their ratio. Nothing of the platform runs: the difference is the
client's own CPU on the same cores, which is why ``benchmarks/annotation.py`` times its
submissions with ``http.client``.
"""

import argparse
import http.client
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

APP = """def application(environ, start_response):
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", "2000")])
    return [b"x" * 2000]
"""
FORM = {"token": "t" * 120, "text": "The waiter brought our food quickly, although the soup was barely warm", "label": "neutral"}
COOKIES = {"sessionid": "s" * 32, "csrftoken": "c" * 32}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per client")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="http-floor-"))
    (folder / "trivial_app.py").write_text(APP)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([
        sys.executable, "-m", "gunicorn", "trivial_app:application", "--chdir", str(folder), "--bind", f"127.0.0.1:{port}",
        "--workers", "2", "--threads", "4", "--worker-class", "gthread", "--log-level", "warning",
    ])
    import requests

    try:
        url = f"http://127.0.0.1:{port}/tasks/sentiment/write/submit"
        for _ in range(100):
            try:
                requests.get(url, timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.2)
        session = requests.Session()
        for name, value in COOKIES.items():
            session.cookies.set(name, value)
        headers = {"HX-Request": "true", "X-CSRFToken": COOKIES["csrftoken"], "Referer": f"http://127.0.0.1:{port}/"}
        raw_headers = {
            **headers, "Cookie": "; ".join(f"{k}={v}" for k, v in COOKIES.items()),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with_requests, with_http_client = [], []
        for _ in range(args.calls):
            started = time.perf_counter()
            session.post(url, data=FORM, headers=headers).text
            with_requests.append(time.perf_counter() - started)
            started = time.perf_counter()
            connection.request("POST", "/tasks/sentiment/write/submit", body=urlencode(FORM), headers=raw_headers)
            connection.getresponse().read()
            with_http_client.append(time.perf_counter() - started)
        a, b = statistics.median(with_requests) * 1000, statistics.median(with_http_client) * 1000
        print(f"{args.calls} calls each, alternating, same server and request")
        print(f"  p50 requests.Session   {a:6.3f} ms")
        print(f"  p50 http.client        {b:6.3f} ms")
        print(f"  requests / http.client {a / b:6.2f}x   (the client's own cost: {a - b:.2f} ms a call)")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
