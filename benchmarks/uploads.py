"""Benchmark: a tar.gz bomb (a few MB holding a 4 GiB member) against the model upload, on a real server.

One command::

    .venv/bin/python benchmarks/uploads.py [--uploads 20] [--member-gib 4]

1. Builds (once, cached under ``var/bench-uploads/``) a tar.gz of a tiny sentiment model plus a
   ``model/model-00002.safetensors`` of ``--member-gib`` GiB of zeros: about 4 MB compressed.
2. Starts gunicorn (2 workers x 4 threads, gthread, as ``benchmarks/annotation.py``) on a fresh
   database and the Redis of ``--redis-url``; creates a researcher with an API token.
3. Web time vs job time: one upload of the bomb through ``POST /api/v1/models`` (the web request's
   time, client side), then its unpacking job run here (``leaderboard.unpacking.unpack``), which
   refuses the member by its header; beside them, what the old request did first, listing the
   tar.gz's members (``tarfile.getmembers``), timed on the same file.
4. Throttle: ``--uploads`` uploads of the bomb within a minute from one user (4 threads); counts
   of answers by status and code.
5. Responsiveness: the p50 of ``GET /tasks/sentiment/leaderboard/`` while those uploads run,
   against the same GET idle, as a ratio.

Nothing here is asserted; the figures are printed side by side.
"""

import argparse
import gzip
import os
import secrets
import statistics
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.annotation import free_port, start_server, stop_server  # noqa: E402

GiB = 1024**3


def build_bomb(target: Path, member_bytes: int) -> Path:
    """A tar.gz of the tiny sentiment model plus one member of ``member_bytes`` zeros (streamed, not in memory)."""
    if target.exists():
        return target
    from tests.tiny_models import build_tiny_classifier

    model_dir = build_tiny_classifier(Path(tempfile.mkdtemp(prefix="bench-upload-model-")), ["positive", "negative", "neutral"])
    partial = target.with_suffix(".part")
    with gzip.open(partial, "wb", compresslevel=9) as compressed, tarfile.open(fileobj=compressed, mode="w|") as archive:
        archive.add(model_dir, arcname="model")
        info = tarfile.TarInfo("model/model-00002.safetensors")
        info.size = member_bytes

        class Zeros:
            block = bytes(8 * 1024 * 1024)

            def __init__(self, size):
                self.left = size

            def read(self, n=-1):
                n = self.left if n is None or n < 0 else min(n, self.left)
                self.left -= n
                return self.block[:n] if n <= len(self.block) else bytes(n)

        archive.addfile(info, Zeros(member_bytes))
    partial.rename(target)
    return target


def setup(args, var_dir: Path) -> dict:
    from benchmarks._postgres import create_database

    create_database(args.database_url)
    env = {
        "DJANGO_SETTINGS_MODULE": "dynabench.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DYNABENCH_VAR_DIR": str(var_dir),
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CACHE_KEY_PREFIX": f"bench-uploads-{secrets.token_hex(4)}",
        "LOG_LEVEL": "WARNING",
        "MODEL_SUBMISSIONS_PER_DAY": "1000",  # the daily limit aside: the hourly attempt throttle is measured
        "API_RATE_MODEL_UPLOADS": "1000/day",
        "RQ_ASYNC": "1",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from dynabench.roles import ensure_role_groups
    from tasks.data.seed import seed_default_tasks

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    ensure_role_groups()
    seed_default_tasks()
    user = User.objects.create_user(username="bench-researcher", password="bench-password-1")
    user.groups.add(Group.objects.get(name="researcher"))
    env["TOKEN"] = Token.objects.create(user=user).key
    return env


def upload(base: str, token: str, data: bytes):
    import requests

    started = time.perf_counter()
    response = requests.post(
        f"{base}/api/v1/models", headers={"Authorization": f"Token {token}"},
        data={"task": "sentiment", "name": f"bomb-{secrets.token_hex(3)}"},
        files={"archive": ("model.tar.gz", data, "application/gzip")}, timeout=300,
    )
    elapsed = time.perf_counter() - started
    body = response.json() if response.headers.get("Content-Type", "").startswith("application/json") else {}
    return response.status_code, body, elapsed


def get_latencies(url: str, stop: threading.Event | None = None, count: int = 0) -> list[float]:
    import requests

    session, times = requests.Session(), []
    while (stop is not None and not stop.is_set()) or (stop is None and len(times) < count):
        started = time.perf_counter()
        session.get(url, timeout=60).content
        times.append(time.perf_counter() - started)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/inputs_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/5")
    parser.add_argument("--uploads", type=int, default=20, help="uploads of the bomb within a minute")
    parser.add_argument("--member-gib", type=float, default=4.0, help="size of the zero-filled member, GiB")
    parser.add_argument("--idle-gets", type=int, default=40)
    args = parser.parse_args()

    cache = REPO / "var" / "bench-uploads"
    cache.mkdir(parents=True, exist_ok=True)
    member = int(args.member_gib * GiB)
    started = time.perf_counter()
    bomb = build_bomb(cache / f"bomb-{member}.tar.gz", member)
    print(f"archive: {bomb.stat().st_size / 1e6:.1f} MB tar.gz holding a {member / GiB:g} GiB member "
          f"(built or found in {time.perf_counter() - started:.1f} s)")
    data = bomb.read_bytes()

    var_dir = Path(tempfile.mkdtemp(prefix="bench-uploads-var-"))
    env = setup(args, var_dir)
    from django.conf import settings

    from leaderboard.unpacking import unpack
    from tasks.models import MLModel

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(env, port, argparse.Namespace(workers=2, threads=4))
    try:
        page = f"{base}/tasks/sentiment/leaderboard/"
        get_latencies(page, count=5)  # warm both workers
        idle = get_latencies(page, count=args.idle_gets)

        status, body, web_s = upload(base, env["TOKEN"], data)
        model = MLModel.objects.get(pk=body["id"])
        started = time.perf_counter()
        summary = unpack(model.pk)
        job_s = time.perf_counter() - started
        model.refresh_from_db()
        started = time.perf_counter()
        with tarfile.open(bomb, "r:gz") as archive:
            listed = len(archive.getmembers())
        list_s = time.perf_counter() - started

        print(f"limit MODEL_ARCHIVE_MAX_UNPACKED_BYTES {settings.MODEL_ARCHIVE_MAX_UNPACKED_BYTES / GiB:g} GiB, "
              f"throttle MODEL_UPLOAD_ATTEMPTS_PER_HOUR {settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR}")
        print(f"  web request (upload, answered {status} '{body.get('status')}')   {web_s * 1000:8.0f} ms")
        print(f"  unpacking job (model {model.status})                  {job_s * 1000:8.0f} ms   {summary[:90]}")
        print(f"  old request's first step, listing the tar.gz ({listed} members) {list_s * 1000:8.0f} ms   "
              f"(x{list_s / web_s:.0f} the web request now)")
        print(f"  failure_reason: {model.failure_reason[:150]}")

        # Throttle and responsiveness: the uploads from 4 threads, GETs meanwhile.
        answers, lock = [], threading.Lock()
        stop = threading.Event()
        busy: list[float] = []
        getter = threading.Thread(target=lambda: busy.extend(get_latencies(page, stop=stop)))
        getter.start()
        remaining = list(range(args.uploads - 1))  # the upload above counted as the first

        def uploader():
            while True:
                with lock:
                    if not remaining:
                        return
                    remaining.pop()
                status, body, elapsed = upload(base, env["TOKEN"], data)
                with lock:
                    answers.append((status, body.get("code") or body.get("status"), elapsed))

        started = time.perf_counter()
        threads = [threading.Thread(target=uploader) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        burst_s = time.perf_counter() - started
        stop.set()
        getter.join()
        counts = Counter((s, c) for s, c, _ in [(status, body.get("status"), web_s)] + answers)
        print(f"{args.uploads} uploads of the bomb in {burst_s:.1f} s from one user:")
        for (code, what), n in sorted(counts.items()):
            print(f"  {n:3d} answered {code} {what}")
        print(f"  web time per upload: p50 {statistics.median(a[2] for a in answers) * 1000:.0f} ms, "
              f"max {max(a[2] for a in answers) * 1000:.0f} ms")
        idle_p50, busy_p50 = statistics.median(idle), statistics.median(busy)
        print(f"GET {page.replace(base, '')}: p50 idle {idle_p50 * 1000:.1f} ms ({len(idle)} GETs), "
              f"during the uploads {busy_p50 * 1000:.1f} ms ({len(busy)} GETs): ratio x{busy_p50 / idle_p50:.2f}")
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
