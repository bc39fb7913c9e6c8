"""Benchmark: logging in on SQLite while a big dataset import runs, against logging in idle.

One command::

    .venv/bin/python benchmarks/import_lock.py [--rows 1000000] [--logins-idle 20] [--cpu-load 2] [--before-checkout /work/main] [--also-one-transaction]

1. Writes a JSONL file of ``--rows`` sentiment rows (cached under ``var/bench-import-lock/``) and
   starts gunicorn (2 workers x 4 threads, gthread) on a fresh SQLite database (WAL, as configured).
2. Idle: ``--logins-idle`` full logins (GET ``/accounts/login/``, POST the credentials, follow the
   redirect: the POST writes the session and ``last_login``, so it needs SQLite's write lock), timed.
3. During: ``manage.py import_dataset`` of the file in a subprocess (its own process, as an RQ job or
   the command would be); logins run back to back until it ends. Each batch of the import commits
   on its own (``tasks/data/importers/writing.py:Commits``), so a login waits for one batch at most. Meanwhile a
   probe in this process takes SQLite's write lock (``BEGIN IMMEDIATE; COMMIT``, 30 s busy timeout)
   every 50 ms and times how long it waited: the lock's share of a login's delay, apart from CPU.
4. With ``--before-checkout PATH`` (a checkout of the code to compare with, e.g. ``/work/main``): the
   same import first run from that checkout's ``manage.py`` against the same database, then from this
   one, each into a new dataset, with an idle login baseline before each, so both figures come from
   one run on the same (shared, loaded) machine.
5. With ``--cpu-load N``: N busy-looping processes run for the whole benchmark (baselines too), as
   other people's work on a small shared machine does.
6. With ``--also-one-transaction``: the same import wrapped in one transaction (what the importer did
   before batching), for the side-by-side figure; logins then wait for the whole import (or fail
   after the 30 s busy timeout).

Prints, per import: rows/s, login p50 and max, their ratio to the idle p50 measured just before,
and the lock probe's p50 and max wait.
"""

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.annotation import free_port, start_server, stop_server  # noqa: E402

ONE_TRANSACTION = """
import sys, django
django.setup()
from django.db import transaction
from tasks.data.importers.datasets import import_dataset
from tasks.data.importers.files import FileSpec
from tasks.models import Task
with transaction.atomic():
    result = import_dataset(task=Task.objects.get(code="sentiment"), name=sys.argv[2], spec=FileSpec(path=sys.argv[1]), split="dev")
print(result.summary())
"""


def write_rows(path: Path, rows: int) -> Path:
    if path.exists():
        return path
    labels = ("positive", "negative", "neutral")
    partial = path.with_suffix(".part")
    with open(partial, "w", encoding="utf-8") as out:
        for i in range(rows):
            out.write(f'{{"uid": "row-{i}", "text": "Benchmark sentence number {i} about the food and the staff", "label": "{labels[i % 3]}"}}\n')
    partial.rename(path)
    return path


def login_once(base: str, username: str, password: str) -> tuple[float, int]:
    import requests

    session = requests.Session()
    started = time.perf_counter()
    page = session.get(f"{base}/accounts/login/", timeout=120)
    token = session.cookies.get("csrftoken") or page.text.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = session.post(f"{base}/accounts/login/", data={"username": username, "password": password, "csrfmiddlewaretoken": token},
                            headers={"Referer": f"{base}/accounts/login/"}, timeout=120, allow_redirects=False)
    return time.perf_counter() - started, response.status_code


def probe_lock(database: Path, stop: threading.Event, waits: list[float]) -> None:
    """Take SQLite's write lock every 50 ms until ``stop``; append each wait (seconds) to ``waits``."""
    import sqlite3

    db = sqlite3.connect(database, timeout=30, isolation_level=None)
    try:
        while not stop.wait(0.05):
            started = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            waits.append(time.perf_counter() - started)
            db.execute("COMMIT")
    finally:
        db.close()


def during(base: str, env: dict, command: list[str], user: tuple[str, str], database: Path):
    """Run ``command`` (an import) and log in back to back until it ends; return login times,
    answers, the import's seconds, its last output line and the lock probe's waits."""
    times, statuses, waits = [], [], []
    stop = threading.Event()
    probe = threading.Thread(target=probe_lock, args=(database, stop, waits), daemon=True)
    started = time.perf_counter()
    importer = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)  # let it open the file and start writing batches
    probe.start()
    while importer.poll() is None:
        elapsed, status = login_once(base, *user)
        times.append(elapsed)
        statuses.append(status)
    seconds = time.perf_counter() - started
    stop.set()
    probe.join()
    out = importer.stdout.read().strip().splitlines()
    return times, statuses, seconds, (out[-1] if out else ""), waits


def idle_logins(base: str, user: tuple[str, str], count: int) -> float:
    idle = [login_once(base, *user)[0] for _ in range(count)]
    p50 = statistics.median(idle)
    print(f"login idle: {len(idle)} logins, p50 {p50 * 1000:.0f} ms, max {max(idle) * 1000:.0f} ms")
    return p50


def report_import(title: str, rows: int, run, idle_p50: float) -> None:
    times, statuses, seconds, summary, waits = run
    print(f"{title}: {seconds:.0f} s, {rows / seconds:,.0f} rows/s, {summary}")
    report("login during it", times, idle_p50)
    if waits:
        print(f"  write-lock probe: {len(waits)} tries, wait p50 {statistics.median(waits) * 1000:.0f} ms, "
              f"max {max(waits) * 1000:.0f} ms")
    print(f"    answers: {sorted(set(statuses))}")


def report(name: str, times: list[float], idle_p50: float) -> None:
    if not times:
        print(f"  {name}: no login completed")
        return
    p50 = statistics.median(times)
    print(f"  {name}: {len(times)} logins, p50 {p50 * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
          f"(p50 x{p50 / idle_p50:.1f} idle, max x{max(times) / idle_p50:.1f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the imported file (default 1M)")
    parser.add_argument("--logins-idle", type=int, default=20)
    parser.add_argument("--also-one-transaction", action="store_true", help="also time logins during a one-transaction import")
    parser.add_argument("--before-checkout", type=Path, help="first import with the code of this checkout (e.g. /work/main), then with this one")
    parser.add_argument("--cpu-load", type=int, default=0, help="busy-looping processes running meanwhile (default 0)")
    args = parser.parse_args()

    cache = REPO / "var" / "bench-import-lock"
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data = write_rows(cache / f"rows-{args.rows}.jsonl", args.rows)
    print(f"file: {args.rows:,} rows, {data.stat().st_size / 1e6:.0f} MB (written or found in {time.perf_counter() - started:.1f} s)")

    var_dir = Path(tempfile.mkdtemp(prefix="bench-import-lock-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DYNABENCH_VAR_DIR": str(var_dir), "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1,localhost", "LOG_LEVEL": "WARNING",
        "CACHE_KEY_PREFIX": f"bench-import-lock-{secrets.token_hex(4)}",
    }
    env.pop("DATABASE_URL", None)  # SQLite under var_dir
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from tasks.data.seed import seed_default_tasks

    call_command("migrate", verbosity=0)
    seed_default_tasks()
    password = "bench-password-1"
    user = User.objects.create_user(username="bench-login", password=password)
    from django.db import connection

    database = Path(connection.settings_dict["NAME"])
    connection.close()

    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.cpu_load)]
    if load:
        print(f"cpu load: {len(load)} busy-looping processes on {os.cpu_count()} cores")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(env, port, argparse.Namespace(workers=2, threads=4))
    login = (user.username, password)
    try:
        for _ in range(3):
            login_once(base, *login)  # warm both workers

        def batched(name: str, checkout: Path = REPO) -> list[str]:
            return [sys.executable, str(checkout / "manage.py"), "import_dataset", "sentiment", name, str(data), "--split", "dev", "--no-progress"]

        if args.before_checkout:
            idle_p50 = idle_logins(base, login, args.logins_idle)
            run = during(base, env, batched("bench-before", args.before_checkout.resolve()), login, database)
            report_import(f"import in batches, code of {args.before_checkout}", args.rows, run, idle_p50)

        idle_p50 = idle_logins(base, login, args.logins_idle)
        run = during(base, env, batched("bench-batched"), login, database)
        report_import("import in batches, this checkout", args.rows, run, idle_p50)

        if args.also_one_transaction:
            command = [sys.executable, "-c", ONE_TRANSACTION, str(data), "bench-one-transaction"]
            run = during(base, env, command, login, database)
            report_import("import in one transaction (before batching)", args.rows, run, idle_p50)
    finally:
        stop_server(server)
        for process in load:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
