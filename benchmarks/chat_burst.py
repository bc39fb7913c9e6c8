"""Benchmark: a burst of chat turns at once with the machine's cores busy, on SQLite and on PostgreSQL.

One command (a few minutes; it needs the machine's Redis at 127.0.0.1:6379, databases 12 and 13, which
it flushes, and its PostgreSQL at 127.0.0.1:5432, where it makes and drops a database of its own)::

    .venv/bin/python benchmarks/chat_burst.py [--turns 200] [--busy 2] [--web-workers 2]

The platform runs as ``make run`` serves it (gunicorn's uvicorn workers, ``--web-workers`` processes,
``WEB_THREADS=4``), once on a fresh SQLite database and once on a fresh PostgreSQL database of the
machine's server (its own ``max_connections``, printed), with the stand-in endpoint of
``benchmarks/chat_concurrency.py`` (a chat answer streams 20 tokens over 5 s). While ``--busy``
processes spin on the cores, ``--turns`` conversations send a turn at once (server-sent events, as the
page's script does). Printed per database: turns finished of those sent, the reasons of the lost ones,
the turns stored as done on the server, and on PostgreSQL the most connections the platform held at
once (``pg_stat_activity``). Nothing here asserts: it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from chat_concurrency import PY, Side, allowlist, chat_burst, fresh_minilm, free_port  # noqa: E402

PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def _spin() -> None:
    while True:
        pass


def _psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url, "-tAc", sql], capture_output=True, text=True, check=True).stdout.strip()


def _peak_connections(database: str, stop: threading.Event, out: list) -> None:
    """Poll ``pg_stat_activity`` for the connections to ``database`` until ``stop``; keep the most."""
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        while not stop.is_set():
            (count,) = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)).fetchone()
            out[0] = max(out[0], count)
            time.sleep(0.1)


def run(side: Side, turns: int, busy: int, endpoint_url: str, database: str | None) -> dict:
    codes = side.prepare()
    side.start()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
    for spinner in spinners:
        spinner.start()
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=_peak_connections, args=(database, stop, peak), daemon=True) if database else None
    if watcher:
        watcher.start()
    try:
        result = asyncio.run(chat_burst(side, codes["chat"], turns, endpoint_url))
    finally:
        stop.set()
        for spinner in spinners:
            spinner.terminate()
        side.stop()
    stored = side.manage("shell", "-c", "from annotation.models import ChatTurn; "
                                        "print(ChatTurn.objects.filter(status='done').count())").strip().splitlines()[-1]
    return {**result, "stored_done": int(stored), "peak_connections": peak[0] if database else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--busy", type=int, default=2, help="processes spinning on the cores during the burst")
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-burst-"))
    endpoint_port = free_port()
    endpoint_url = f"http://127.0.0.1:{endpoint_port}"
    endpoint = subprocess.Popen([PY, str(REPO / "benchmarks" / "chat_concurrency.py"), "--serve-endpoint", str(endpoint_port)],
                                start_new_session=True)
    minilm = tmp / "minilm-sentiment"
    fresh_minilm(str(minilm))
    command = ["gunicorn", "dynabench.asgi:application", "--worker-class", "dynabench.web_worker.WebWorker",
               "--workers", str(args.web_workers), "--timeout", "120"]
    database = f"bench_burst_{os.getpid()}"
    max_connections = _psql(PG_ADMIN, "SHOW max_connections")
    results = {}
    try:
        sqlite = Side("sqlite", REPO, command, 12, tmp, endpoint_url, minilm, allowlist(endpoint_port))
        results["sqlite"] = run(sqlite, args.turns, args.busy, endpoint_url, None)
        _psql(PG_ADMIN, f"CREATE DATABASE {database}")
        postgres = Side("postgresql", REPO, command, 13, tmp, endpoint_url, minilm, allowlist(endpoint_port))
        postgres.env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{database}"
        results["postgresql"] = run(postgres, args.turns, args.busy, endpoint_url, database)
    finally:
        os.killpg(endpoint.pid, signal.SIGTERM)
        subprocess.run(["psql", PG_ADMIN, "-tAc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"], capture_output=True)
    pool = os.environ.get("DB_POOL_MAX_SIZE", "10")
    print(f"\n{args.turns} chat turns at once, {args.busy} busy processes on {os.cpu_count()} cores, {args.web_workers} web processes; "
          f"PostgreSQL max_connections {max_connections}, pool of {pool} per process")
    print(f"{'database':<11} {'finished':>9} {'lost':>5} {'stored done':>12} {'first token p50/p95 s':>22} {'peak connections':>17}")
    for name, r in results.items():
        print(f"{name:<11} {r['finished']:>5}/{r['of']:<3} {r['of'] - r['finished']:>5} {r['stored_done']:>12} "
              f"{r['ttft_p50']:>10.2f}/{r['ttft_p95']:<10.2f} {r['peak_connections'] if r['peak_connections'] is not None else '-':>17}")


if __name__ == "__main__":
    main()
