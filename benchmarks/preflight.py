"""Benchmark: ``dynabench check`` on a 100,000-line predictions file, against a real server.

One command::

    /work/main/.venv/bin/python benchmarks/preflight.py [--lines 100000] [--repeat 5]

What it does:

1. Prepares its own platform in a temporary folder (``tests/worker_stack.py``: a migrated SQLite
   copy, its own embedded Redis and media root): the default tasks, an NLI scoring dataset of
   ``--lines`` items (``nli-bench``), a researcher and an API token.
2. Writes ``good.jsonl`` (one right prediction per item) and ``bad.jsonl`` (the same with one
   line in 100 broken: invalid JSON, an unknown label, an unknown uid or a duplicate, in turn).
3. Starts gunicorn (1 worker, 4 threads) on a free port.
4. Times, ``--repeat`` times each (median reported):
   - ``dynabench check bad.jsonl --task nli``, the whole command as a shell runs it (Python
     start-up, upload, the server's checks, printing the problems), exit status 3;
   - the same with ``good.jsonl`` (exit 0);
   - ``DynabenchClient.check_predictions`` on ``bad.jsonl`` in this process: the request alone;
   - a real ``submit predictions --no-check`` of ``bad.jsonl`` (refused: the same checks plus
     the staging a submission does), for the side-by-side ratio.
   Then checks that no model and no file was stored by the checks, and prints the figures next
   to the 1-second target as ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dynabench_client import BadRequest, DynabenchClient  # noqa: E402
from tests.worker_stack import WorkerStack, _children, migrated_template  # noqa: E402

LABELS = ["entailment", "neutral", "contradiction"]
TARGET_S = 1.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup_code(lines: int) -> str:
    return f"""
import json
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from tasks.models import Dataset, DatasetItem, Round, Task
from tasks.data.seed import seed_default_tasks

seed_default_tasks()
task = Task.objects.get(code="nli")
dataset = Dataset.objects.create(task=task, round=Round.objects.get(task=task, number=1), name="nli-bench", access="scoring",
                                 split="dev", label_visibility="public")
labels = {LABELS!r}
DatasetItem.objects.bulk_create(
    [DatasetItem(dataset=dataset, uid=f"b{{i}}", input={{"premise": f"Premise {{i}}.", "hypothesis": f"Hypothesis {{i}}."}},
                 target={{"label": labels[i % 3]}}) for i in range({int(lines)})],
    batch_size=5000,
)
user = User.objects.create_user("bench-researcher", password="pw")
user.groups.add(*Group.objects.filter(name__in=["researcher"]))
print(json.dumps({{"token": Token.objects.create(user=user).key}}))
"""


def write_files(folder: Path, lines: int) -> tuple[Path, Path]:
    good, bad = folder / "good.jsonl", folder / "bad.jsonl"
    with open(good, "w") as g, open(bad, "w") as b:
        for i in range(lines):
            line = json.dumps({"uid": f"b{i}", "label": LABELS[i % 3]})
            g.write(line + "\n")
            if i % 100 == 7:
                line = [
                    '{"uid": "b%d", "label": ' % i,
                    json.dumps({"uid": f"b{i}", "label": "perhaps"}),
                    json.dumps({"uid": f"nobody-{i}", "label": "neutral"}),
                    json.dumps({"uid": f"b{i - 1}", "label": "neutral"}),
                ][(i // 100) % 4]
            b.write(line + "\n")
    return good, bad


def start_server(env: dict, port: int) -> subprocess.Popen:
    import requests

    command = [
        sys.executable, "-m", "gunicorn", "dynabench.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", "1", "--threads", "4", "--worker-class", "gthread", "--timeout", "120", "--log-level", "warning",
    ]
    server = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return server
        except requests.RequestException:
            pass
        time.sleep(0.3)
    os.killpg(server.pid, signal.SIGKILL)
    raise SystemExit("gunicorn did not answer /healthz within 120 s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(fn, repeat: int, server_pids: list[int]) -> tuple[float, float, float, object]:
    """Median wall seconds of ``fn()``, and median CPU seconds it cost this process and its children
    (the command line) and the server's workers: on a busy shared machine the CPU seconds say what
    an idle one would take, the wall seconds what this one took."""
    walls, clients, servers, result = [], [], [], None
    for _ in range(repeat):
        mine = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        theirs = sum(cpu_seconds(pid) for pid in server_pids)
        started = time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        clients.append(sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, mine)))
        servers.append(sum(cpu_seconds(pid) for pid in server_pids) - theirs)
    return statistics.median(walls), statistics.median(clients), statistics.median(servers), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-preflight-") as tmp:
        root = Path(tmp)
        stack = WorkerStack(root / "stack", migrated_template(root), SECRET_KEY=secrets.token_urlsafe(40), DEBUG="0",
                            ALLOWED_HOSTS="127.0.0.1,localhost", PREDICTIONS_MAX_BYTES=str(200 * 2**20))
        started = time.perf_counter()
        token = stack.json(setup_code(args.lines))["token"]
        print(f"set-up: NLI scoring dataset of {args.lines:,} items in {time.perf_counter() - started:.1f} s")
        good, bad = write_files(root, args.lines)
        print(f"files: {good.name} {good.stat().st_size / 2**20:.1f} MiB, {bad.name} with {args.lines // 100:,} bad lines")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = start_server(stack.env, port)
        cli_env = {**os.environ, "PYTHONPATH": str(REPO), "DYNABENCH_URL": url, "DYNABENCH_API_KEY": token,
                   "DYNABENCH_CONFIG": str(root / "cli.json")}

        def cli(*argv):
            return subprocess.run([sys.executable, "-m", "dynabench_client", "-q", *map(str, argv)], cwd=REPO, env=cli_env,
                                  capture_output=True, text=True, timeout=600)

        client = DynabenchClient(api_key=token, base_url=url)
        workers = _children(server.pid)

        def refused_submission():
            try:
                client.submit_predictions(bad, "nli", "bench-real")
            except BadRequest as error:
                return error
            raise SystemExit("the real submission of bad.jsonl was not refused")

        def refused_check():
            try:
                client.check_predictions(bad, "nli")
            except BadRequest as error:
                return error
            raise SystemExit("the check of bad.jsonl found nothing")

        try:
            cli("check", good, "--task", "nli")  # warm the server (imports, first queries)
            bad_row = timed(lambda: cli("check", bad, "--task", "nli"), args.repeat, workers)
            good_row = timed(lambda: cli("check", good, "--task", "nli"), args.repeat, workers)
            request_row = timed(refused_check, args.repeat, workers)
            submit_row = timed(refused_submission, args.repeat, workers)
            noop_row = timed(lambda: cli("--help"), args.repeat, workers)
            load = os.getloadavg()[0]
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
            stack.stop()
        models = stack.query("SELECT COUNT(*) FROM tasks_mlmodel")[0][0]
        stored = [p for p in (root / "stack" / "media").rglob("*") if p.is_file()] if (root / "stack" / "media").exists() else []

    assert bad_row[3].returncode == 3, bad_row[3].stderr[-2000:]
    assert good_row[3].returncode == 0, good_row[3].stderr[-2000:]
    print("\n`dynabench check bad.jsonl --task nli` said (exit 3):")
    print("  " + "\n  ".join(line[:160] for line in bad_row[3].stderr.strip().splitlines()[:8]))
    print(f"\n{args.lines:,} lines, median of {args.repeat}, gunicorn 1 worker x 4 threads, SQLite, "
          f"{os.cpu_count()} cores at load average {load:.1f}:")
    print(f"  {'':<50} {'wall s':>7} {'x 1 s':>6} {'x real':>7}   {'CPU s: client':>13} {'server':>7} {'sum':>6} {'x 1 s':>6}")
    rows = [
        ("dynabench check bad.jsonl (whole command)", bad_row),
        ("dynabench check good.jsonl (whole command)", good_row),
        ("check request alone (client in-process)", request_row),
        ("real submission refused (same checks + staging)", submit_row),
        ("dynabench --help (Python start-up floor)", noop_row),
    ]
    for name, (wall, client_cpu, server_cpu, _) in rows:
        cpu = client_cpu + server_cpu
        print(f"  {name:<50} {wall:7.3f} {wall / TARGET_S:6.2f} {wall / submit_row[0]:7.2f}   "
              f"{client_cpu:13.3f} {server_cpu:7.3f} {cpu:6.3f} {cpu / TARGET_S:6.2f}")
    print(f"\nstored by the checks: {models} models, {len(stored)} files under MEDIA_ROOT")
    return 0 if models == 0 and not stored else 1


if __name__ == "__main__":
    sys.exit(main())
