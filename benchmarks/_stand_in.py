"""What the endpoint benchmarks share: a scratch ``var`` folder (so the run neither clears the cache of a
platform running from this checkout nor leaves an embedded Redis behind), a stand-in OpenAI-compatible
server of ``tests/`` in its own process, and a bare concurrent ``httpx`` client that is the reference the
platform's path is measured against."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


DYNASENT_DEV = Path(os.environ.get("DYNABENCH_SHARED_DATA", ROOT.parent / "shared" / "data")) / "dynasent" / \
    "dynasent-v1.1-round01-yelp-dev.jsonl"
"""DynaSent round 1's Yelp dev sentences: the texts the endpoint benchmarks send."""


def set_up_django() -> Path:
    """Point the platform's ``var`` folder (its embedded Redis, SQLite file and secret key) at a new scratch
    folder and set Django up; call before importing anything of Django's. Returns the folder, for
    ``stop_scratch_redis``."""
    var = Path(tempfile.mkdtemp(prefix="bench-var-"))
    os.environ["DYNABENCH_VAR_DIR"] = str(var)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")
    import django

    django.setup()
    return var


def stop_scratch_redis(var: Path) -> None:
    """Stop the embedded Redis Django started in ``var`` (none runs when ``REDIS_URL`` named a server)."""
    from dynabench import embedded_redis

    embedded_redis.stop(var / "redis.sock")


def start_stand_in(script: str, *args: str) -> tuple[subprocess.Popen, str]:
    """Start ``tests/<script>`` (a server that prints ``listening <url>`` once up) with ``args``; return
    the process and its base URL. Exits the benchmark when the server does not start."""
    process = subprocess.Popen([sys.executable, str(ROOT / "tests" / script), *args], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    if not line.startswith("listening "):
        process.kill()
        raise SystemExit(f"tests/{script} did not start: {line!r}")
    return process, line.split(" ", 1)[1]


def bare_chat_per_s(url: str, bodies: list[dict], concurrency: int) -> float:
    """Requests/s of a bare ``httpx`` client posting ``bodies`` to ``url``'s ``/v1/chat/completions`` from
    ``concurrency`` threads over a keep-alive pool."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(timeout=60, limits=limits) as client:
        def one(body):
            response = client.post(url + "/v1/chat/completions", json=body)
            response.raise_for_status()
            return response.json()["choices"][0]["message"]["content"]

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, bodies))
        return len(bodies) / (time.perf_counter() - start)
