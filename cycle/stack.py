"""The platform's processes for a cycle run: a Gunicorn web server on a free port and one
RQ worker (``manage.py rqworker default evaluation training``), started as real child
processes against the same database and Redis as the caller, and stopped by their ids.

Used by ``cycle.driver`` (``manage.py run_cycle``); nothing here knows about tasks.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests
from django.conf import settings


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PlatformProcesses:
    """Start and stop the web server and the RQ worker.

    ``env``: the environment of both (the caller's plus the cycle's settings);
    ``log_dir``: where ``web.log`` and ``worker.log`` go; ``web_workers``/``web_threads``:
    Gunicorn's ``--workers``/``--threads``; ``worker_threads``: torch's intra-op threads in the
    RQ worker (``OMP_NUM_THREADS``). Each web process answers several requests at once, so it
    gets one torch thread: on 2 shared cores, two threads per inference measured 3x slower
    than one (13.7 vs 40-44 MiniLM sentences/s at a load average of 7). ``base_url`` is set once started.
    """

    env: dict
    log_dir: Path
    web_workers: int = 2
    web_threads: int = 4
    worker_threads: int = 1
    base_url: str = ""
    _children: list = field(default_factory=list)
    _logs: list = field(default_factory=list)

    def _spawn(self, name: str, argv: list[str], *, threads: int) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "ab")
        self._logs.append(log)
        # A session of its own: a Ctrl-C meant for the cycle reaches the children only through stop().
        env = {**self.env, "OMP_NUM_THREADS": str(threads)}
        child = subprocess.Popen(argv, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._children.append((name, child))
        return child

    def start(self, *, timeout: float = 180.0) -> None:
        """Start Gunicorn and the worker; return once ``/healthz`` answers 200 and the worker is registered.

        Raises ``RuntimeError`` with the tail of the log of a process that exited or timed out.
        """
        self.log_dir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        self._spawn("web", [
            sys.executable, "-m", "gunicorn", "dynabench.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(self.web_workers), "--threads", str(self.web_threads), "--timeout", "300",
            "--graceful-timeout", "10", "--no-control-socket",
            # Longer than the cycle's polling interval: with Gunicorn's default of 2 s, a poll every 2 s
            # sometimes went out on a kept-alive connection the server was closing (RemoteDisconnected).
            "--keep-alive", "75",
        ], threads=1)
        # One process that runs every job itself: torch, transformers and the loaded models stay in memory
        # between jobs instead of being imported again by a fresh work horse for each one.
        self._spawn("worker", [sys.executable, manage, "rqworker", "--worker-class", "rq.worker.SimpleWorker", "default", "evaluation", "training"],
                    threads=self.worker_threads)
        deadline = time.monotonic() + timeout
        while True:
            for name, child in self._children:
                if child.poll() is not None:
                    raise RuntimeError(f"the {name} process exited with {child.returncode}:\n{self.log_tail(name)}")
            try:
                health = requests.get(f"{self.base_url}/healthz", timeout=5)
                if health.status_code == 200 and health.json().get("workers", {}).get("count", 0) >= 1:
                    return
            except (requests.RequestException, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the platform did not come up within {timeout:.0f} s:\n{self.log_tail('web')}\n{self.log_tail('worker')}")
            time.sleep(0.5)

    def check_alive(self) -> None:
        """Raise ``RuntimeError`` if the web server or the worker has exited."""
        for name, child in self._children:
            if child.poll() is not None:
                raise RuntimeError(f"the {name} process exited with {child.returncode}:\n{self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM each child (by its own pid), wait up to 30 s, then SIGKILL what is left."""
        for _, child in self._children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        for _, child in self._children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self._children.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def child_environment(**overrides) -> dict:
    """Return ``os.environ`` with the platform settings the children must share with this process."""
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
    db = settings.DATABASES["default"]
    if "DATABASE_URL" not in env and db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    env["MEDIA_ROOT"] = str(settings.MEDIA_ROOT)
    env["DYNABENCH_MODELS_DIR"] = str(settings.MODELS_DIR)
    env.update({k: str(v) for k, v in overrides.items() if v is not None})
    return env
