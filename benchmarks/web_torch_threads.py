"""Benchmark: one torch thread per forward in the web process against torch's default, side by side.

One command::

    /work/main/.venv/bin/python benchmarks/web_torch_threads.py [--database-url URL] [--redis-url URL]

``dynabench/wsgi.py`` runs every forward of a web process on ``WEB_TORCH_THREADS`` threads
(default 1). This starts two gunicorn servers (``--workers`` x ``--threads``, gthread, as
``make run``) on one database prepared as ``benchmarks/annotation.py`` prepares it (it is
**flushed**; a MiniLM sentiment model in the loop): one with ``WEB_TORCH_THREADS=1``, one with
as many threads as torch takes when nobody sets it (one per core). Then:

1. Sequential: one annotator per server submits ``--requests`` examples to each, the two
   servers taking turns (which goes first alternates). Reports the p50 submit time of each, the
   p50 of the server's own model time (``Server-Timing``) and of the rest, and their ratios.
2. Load: ``--annotators`` annotators submit to one server for ``--duration`` seconds, then to
   the other. Reports throughput and p50/p95 of each, and their ratios.
"""

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.annotation import (  # noqa: E402
    SENTIMENT_LABELS, TEXTS, Annotator, argument_parser, free_port, percentile, prepare, setup_django, start_server,
    stop_server,
)


def parse_args():
    """``benchmarks/annotation.py``'s options: ``--requests`` go to each server, ``--duration`` is
    the load on each server (20 s by default)."""
    parser = argument_parser(__doc__.split("\n\n")[0])
    parser.set_defaults(duration=20.0)
    return parser.parse_args()


def sequential(servers: dict, users, n: int) -> dict:
    """``{name: [(seconds, model seconds)]}``: ``n`` submissions to each server, taking turns."""
    annotators = {name: Annotator(base, users[k].username) for k, (name, base) in enumerate(servers.items())}
    for annotator in annotators.values():  # the first forwards of a worker thread are slower
        for k in range(10):
            annotator.submit(f"warm up {k}", "neutral")
    times = {name: [] for name in servers}
    names = list(servers)
    for k in range(n):
        text, label = f"{TEXTS[k % len(TEXTS)]} (take {k}).", SENTIMENT_LABELS[k % 3]
        for name in (names if k % 2 else names[::-1]):
            seconds, status, _, model_s = annotators[name].submit(text, label)
            if status != 200:
                raise SystemExit(f"{name}: submission {k} failed with HTTP {status}")
            times[name].append((seconds, model_s))
    return times


def load(base: str, users, seconds: float) -> tuple[list[float], int, float]:
    """``(latencies, errors, wall seconds)`` of ``len(users)`` annotators submitting for ``seconds``."""
    annotators = [Annotator(base, user.username) for user in users]
    latencies, errors = [[] for _ in annotators], [0] * len(annotators)
    stop = time.monotonic() + seconds

    def run(k):
        n = 0
        while time.monotonic() < stop:
            try:
                elapsed, status, example_id, _ = annotators[k].submit(f"load {k}.{n}: {TEXTS[n % len(TEXTS)]}", "neutral")
            except Exception:
                errors[k] += 1
            else:
                if status == 200 and example_id:
                    latencies[k].append(elapsed)
                else:
                    errors[k] += 1
            n += 1

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(annotators))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [x for rows in latencies for x in rows], sum(errors), time.monotonic() - started


def main():
    args = parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="bench-torch-threads-"))
    env, models_dir = setup_django(args, var_dir)
    from django.db import connection

    task, model, users, origin = prepare(args, var_dir, models_dir)
    connection.close()
    default_threads = os.cpu_count() or 1
    settings = {"1 thread": "1", f"{default_threads} threads (torch's default)": str(default_threads)}
    print(f"database: {args.database_url} · model in the loop: {origin}")
    print(f"two gunicorn servers, {args.workers} workers x {args.threads} threads each: WEB_TORCH_THREADS = "
          + " vs ".join(settings.values()))
    servers, processes = {}, []
    try:
        for name, threads in settings.items():
            port = free_port()
            processes.append(start_server({**env, "WEB_TORCH_THREADS": threads}, port, args))
            servers[name] = f"http://127.0.0.1:{port}"
        one, default = list(servers)
        ms = lambda s: s * 1000  # noqa: E731

        times = sequential(servers, users, args.requests)
        p50 = {name: {
            "http": statistics.median(t for t, _ in rows),
            "model": statistics.median(m for _, m in rows),
            "rest": statistics.median(t - m for t, m in rows),
        } for name, rows in times.items()}
        print(f"\n[1] sequential submissions, {args.requests} to each server, taking turns (p50)")
        print(f"    {'':34s} {'submit':>9s} {'model':>9s} {'rest':>9s}")
        for name in servers:
            row = p50[name]
            print(f"    {name:34s} {ms(row['http']):7.2f}ms {ms(row['model']):7.2f}ms {ms(row['rest']):7.2f}ms")
        print(f"    {'default / 1 thread':34s} {p50[default]['http'] / p50[one]['http']:8.2f}x "
              f"{p50[default]['model'] / p50[one]['model']:8.2f}x {p50[default]['rest'] / p50[one]['rest']:8.2f}x")

        print(f"\n[2] {args.annotators} concurrent annotators, {args.duration:.0f} s on each server in turn")
        figures = {}
        for name, base in servers.items():
            latencies, errors, wall = load(base, users[1:args.annotators + 1], args.duration)
            figures[name] = (len(latencies) / wall, percentile(latencies, .5), percentile(latencies, .95), errors)
            print(f"    {name:34s} {figures[name][0]:6.1f}/s  p50 {ms(figures[name][1]):6.1f} ms  "
                  f"p95 {ms(figures[name][2]):6.1f} ms  errors {errors}")
        print(f"    {'1 thread / default':34s} throughput {figures[one][0] / figures[default][0]:.2f}x, "
              f"p50 latency {figures[one][1] / figures[default][1]:.2f}x")
    finally:
        for process in processes:
            stop_server(process)


if __name__ == "__main__":
    main()
