"""Benchmark: faults injected while people write, every request counted.

One command, on this machine, loopback only (three to four minutes on the 2-core machine)::

    .venv/bin/python benchmarks/faults.py [--faults redis,postgres,horse,web] [--annotators 4] [--chats 8]
        [--postgres-down 5] [--keep]

Each fault runs on a scratch platform of its own (``tests/worker_stack.py``: a SQLite database copied
from one migrated template, gunicorn with ``make run``'s worker class, two web processes of two
threads, RQ workers), and, where the fault concerns them, a ``redis-server`` (``tests/private_redis.py``)
or a PostgreSQL cluster (``tests/private_postgres.py``) of its own on a free local port. The machine's
shared servers are never touched. The load (``tests/annotator_load.py``): ``--annotators`` people
write sentiment examples through ``POST /api/v1/examples`` with a tiny BERT in the loop, as fast as
they are answered; an example that gets no acknowledgement (a refused connection, a 5xx, a reset) is
sent again with the same ``Idempotency-Key`` after 0.2 s, as a careful client does, until it is.

The faults:

1. ``redis``: the platform's Redis stopped for 10 s, then started again empty; an RQ worker runs.
2. ``postgres``: the platform on PostgreSQL, the server restarted: stopped (``pg_ctl stop -m fast``,
   which ends every session), kept down ``--postgres-down`` seconds (5), started again.
3. ``horse``: an RQ work horse SIGKILLed mid-evaluation (1,500 items, a small BERT), as the
   out-of-memory killer does, while its worker lives.
4. ``web``: one of the two web processes SIGKILLed while ``--chats`` conversations stream chat turns
   (``POST /api/v1/tasks/{code}/chat/turns`` as server-sent events, 16 tokens over about 5 s from a
   local OpenAI-compatible stand-in, ``tests/endpoint_server.py``) and the annotators write. A turn cut
   off is sent again, as the page does. The page's wait for a model (``DYNABENCH_MODEL_WAIT_S``) is
   20 s here, so that the turns the killed process was streaming, stored ``running``, are failed
   within the run: by the next read of their conversation past that wait and the 60 s grace.

The table: **requests during it** (examples or chat turns under way at some moment from the fault's
start until the first success after its end, those in flight when it began included; a kill's end
is the kill itself, except for ``horse``, whose fault lasts until a worker takes the evaluation up
again), **acknowledged** (examples, or chat turns that ended with ``done``, over the whole run),
**stored** (of those, found in the database afterwards with the same text), **lost** (acknowledged
but not stored), **time to recover** (from the fault's end to the end of the first success sent
after it; for ``horse``, from the kill to the evaluation taken up again), and the answers given
during the fault, by HTTP status (or the client's error when there was no answer). With ``--keep``
the scratch folder stays, with the servers' logs and every request (``<fault>-examples.jsonl``,
``web-turns.jsonl``). Nothing here asserts: it measures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRATCH = Path(tempfile.mkdtemp(prefix="bench-faults-"))
os.environ["DYNABENCH_VAR_DIR"] = str(SCRATCH / "var")
for _name in ("DATABASE_URL", "REDIS_URL"):
    os.environ.pop(_name, None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.stack_settings")

import django  # noqa: E402

django.setup()

from dynabench import embedded_redis  # noqa: E402
from tests.annotator_load import UNLIMITED, Attempt, Load, writing_setup  # noqa: E402
from tests.worker_stack import WorkerStack, migrated_template, sentiment_model_setup  # noqa: E402

REDIS_DOWN_S = 10
CEILING_S = 300  # a ceiling that only catches a hang
CHAT_DEFINITION = ROOT / "tasks" / "data" / "task_definitions" / "adversarial-safety-chat.json"
SMALL_BERT = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)


@dataclass
class Row:
    """One line of the table."""

    fault: str
    during: list = field(default_factory=list)
    acknowledged: int = 0
    stored: int = 0
    lost: int = 0
    recover_s: float | None = None
    note: str = ""

    def answers(self) -> str:
        counts = Counter(str(a.status) if a.status is not None else (a.error or "no answer") for a in self.during)
        return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))


def wait_for(condition, *, what: str, timeout: float = CEILING_S, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise SystemExit(f"hung: no sign of {what} after {timeout:.0f} s")


def first_success_after(attempts: list, moment: float) -> float | None:
    """Seconds from ``moment`` to the end of the first acknowledged attempt that started after it."""
    ends = [a.ended for a in attempts if a.acknowledged and a.started >= moment]
    return min(ends) - moment if ends else None


def during(attempts: list, start: float, end: float) -> list:
    """The attempts under way at some moment from the fault's ``start`` until the first success after
    its ``end`` (those in flight when it began included)."""
    recovered = first_success_after(attempts, end)
    until = end + recovered if recovered is not None else float("inf")
    return [a for a in attempts if a.ended >= start and a.started < until]


def dump(name: str, attempts: list, start: float) -> None:
    """Write every attempt, its times relative to the fault's start, to ``<scratch>/<name>.jsonl`` (kept with ``--keep``)."""
    with open(SCRATCH / f"{name}.jsonl", "w") as out:
        for a in attempts:
            out.write(json.dumps({"sent": a.sent, "started": round(a.started - start, 3), "ended": round(a.ended - start, 3),
                                  "status": a.status, "id": a.id, "error": a.error, "cut": getattr(a, "cut", False)}) + "\n")


def examples_row(fault: str, load: Load, rows: dict, start: float, end: float, note: str = "") -> Row:
    """The table's row for the examples of ``load``: ``rows`` are ``{id: text}`` read from the database."""
    attempts = [a for a in load.snapshot() if a.sent == "example"]
    dump(fault.split()[0].lower() + "-examples", attempts, start)
    acked = load.acknowledged()
    stored = sum(1 for pk, text in acked.items() if rows.get(pk) == text)
    unacked = len(set(rows) - set(acked))
    extra = f"; {unacked} stored without an acknowledgement" if unacked else ""
    return Row(fault, during(attempts, start, end), len(acked), stored, len(acked) - stored,
               first_success_after(attempts, end), note + extra)


def run_load_across(stack: WorkerStack, base: str, setup: dict, fault, *, per_writer: int = 100000) -> tuple[Load, float, float]:
    """Run the annotators against ``base``; once they have written a few examples, call ``fault()``,
    which returns ``(start, end)`` of the fault; stop the load once an example sent after the fault's
    end is acknowledged and five more seconds have passed."""
    load = Load(base, setup, per_writer=per_writer).start()
    try:
        load.wait_for_acknowledged(10, timeout=CEILING_S)
        time.sleep(2)
        start, end = fault()
        wait_for(lambda: first_success_after(load.snapshot(), end) is not None, what="an example acknowledged after the fault")
        time.sleep(5)
    finally:
        load.stop()
    return load, start, end


def sqlite_examples(stack: WorkerStack) -> dict:
    return dict(stack.query("SELECT id, json_extract(input, '$.text') FROM annotation_example"))


# --- 1. Redis down 10 s, back empty --------------------------------------------------------------


def redis_fault(args, template: Path, model_dir: Path) -> list[Row]:
    from tests.private_redis import PrivateRedis

    root = SCRATCH / "redis"
    redis = PrivateRedis(root / "redis").start()
    stack = WorkerStack(root, template, REDIS_URL=redis.url(0), **UNLIMITED)
    try:
        setup = stack.json(writing_setup(model_dir, annotators=args.annotators))
        stack.worker("worker", cache=root / "cache", queues=("default",))
        stack.wait_listening()
        base = stack.gunicorn(threads=2, workers=2)
        marks = {}

        def fault():
            start = time.monotonic()
            redis.stop()
            time.sleep(REDIS_DOWN_S)
            redis.start()  # empty: no persistence
            marks["back"] = time.monotonic()
            return start, marks["back"]

        load, start, end = run_load_across(stack, base, setup, fault)
        registered = wait_for(lambda: workers_registered(base), what="the worker to register again", timeout=180)
        note = f"the RQ worker registered again {registered - end:.0f} s after Redis came back (its next heartbeat)"
        return [examples_row(f"Redis down {REDIS_DOWN_S} s, back empty", load, sqlite_examples(stack), start, end, note)]
    finally:
        stack.stop()
        redis.stop()


def workers_registered(base: str) -> float | None:
    import urllib.request

    try:
        with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
            if json.loads(response.read())["workers"]["count"] >= 1:
                return time.monotonic()
    except (OSError, ValueError, KeyError):
        return None
    return None


# --- 2. PostgreSQL restarted ----------------------------------------------------------------------


def postgres_fault(args, template: Path, model_dir: Path) -> list[Row]:
    from tests.private_postgres import PrivatePostgres

    root = SCRATCH / "postgres"
    server = PrivatePostgres().start()
    stack = WorkerStack(root, template, DATABASE_URL=server.create_database("faults"), **UNLIMITED)
    try:
        stack.python("from django.core.management import call_command\ncall_command('migrate', verbosity=0)", timeout=900)
        setup = stack.json(writing_setup(model_dir, annotators=args.annotators))
        base = stack.gunicorn(threads=2, workers=2)

        def fault():
            start = time.monotonic()
            server.stop(mode="fast")
            time.sleep(args.postgres_down)
            server.start()
            return start, time.monotonic()

        load, start, end = run_load_across(stack, base, setup, fault)
        with server.connect("faults") as conn:
            rows = dict(conn.execute("SELECT id, input->>'text' FROM annotation_example").fetchall())
        return [examples_row(f"PostgreSQL restarted (down {args.postgres_down:g} s)", load, rows, start, end,
                             f"stopped (fast) and started again: {end - start:.1f} s")]
    finally:
        stack.stop()
        server.close()


# --- 3. a work horse killed mid-evaluation --------------------------------------------------------


def horse_fault(args, template: Path, model_dir: Path) -> list[Row]:
    from tests.tiny_models import build_tiny_classifier

    root = SCRATCH / "horse"
    small = build_tiny_classifier(root / "small-bert", ["positive", "negative", "neutral"], **SMALL_BERT)
    stack = WorkerStack(root, template, LEADERBOARD_BOOTSTRAP_RESAMPLES="50", EVALUATION_SHARD_ITEMS="100000", **UNLIMITED)
    try:
        setup = stack.json(writing_setup(model_dir, annotators=args.annotators))
        stack.worker("evaluator", cache=root / "cache", queues=("evaluation",))
        stack.wait_listening()
        base = stack.gunicorn(threads=2, workers=2)
        marks = {}

        def fault():
            stack.python(sentiment_model_setup(1500, small))
            wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status = 'running'"), what="the evaluation to run",
                     every=0.02)
            horse = wait_for(lambda: stack.horse("evaluator"), what="the work horse", every=0.02)
            os.kill(horse, signal.SIGKILL)
            killed = time.monotonic()
            wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status = 'running' AND attempt = 2"),
                     what="the evaluation to be taken up again", every=0.02)
            marks["again"] = time.monotonic()
            return killed, killed

        load, start, end = run_load_across(stack, base, setup, fault)
        wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status IN ('done', 'failed')"),
                 what="the evaluation to end")
        (status, attempt, items), = stack.query("SELECT status, attempt, n_examples FROM leaderboard_evaluationrun")
        row = examples_row("RQ work horse SIGKILLed mid-evaluation", load, sqlite_examples(stack), start, marks["again"],
                           f"the evaluation was taken up again {marks['again'] - start:.1f} s after the kill and ended "
                           f"{status} on attempt {attempt} ({items} items); the other columns: the annotators' examples")
        row.recover_s = marks["again"] - start
        return [row]
    finally:
        stack.stop()


# --- 4. a web process killed while chat turns stream ---------------------------------------------


CHAT_SETUP = """
import json
from tasks.data.seed import create_task
from tasks.loop.endpoints.records import create_endpoint_model

task, _ = create_task(json.loads(open(DEFINITION).read()))
model = create_endpoint_model(task=task, owner=None, name="stand-in", base_url=URL, model_name="tiny-gpt2",
                              params={"temperature": 0, "max_tokens": 16}, timeout_s=15, max_retries=0, max_concurrency=64)
task.current_round().target_models.set([model])
print(json.dumps({"code": task.code}))
"""


@dataclass
class TurnAttempt(Attempt):
    """A chat turn sent (``text``: its prompt): acknowledged when its stream ended with ``done`` (``id``
    1); ``cut`` when the stream broke off."""

    cut: bool = False


class Chats:
    """``n`` people, each in a conversation (a new one when its turns run out), sending turns as
    server-sent events; a turn that fails or is cut off is sent again with the same state and prompt."""

    def __init__(self, base: str, code: str, tokens: list[str]):
        self.base, self.code, self.tokens = base, code, tokens
        self.attempts: list[TurnAttempt] = []
        self.lock, self.stopping = threading.Lock(), threading.Event()
        self.threads = [threading.Thread(target=self._talk, args=(n, t), daemon=True) for n, t in enumerate(tokens)]

    def start(self) -> Chats:
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(120)

    def _request(self, token: str, path: str, body: dict, stream: bool):
        host, port = self.base.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        if stream:
            headers["Accept"] = "text/event-stream"
        connection.request("POST", path, body=json.dumps(body), headers=headers)
        return connection, connection.getresponse()

    def _start(self, token: str) -> str | None:
        try:
            connection, response = self._request(token, f"/api/v1/tasks/{self.code}/chat",
                                                 {"mode": "conversation", "accept_content_warning": True}, False)
            data = json.loads(response.read() or b"{}")
            connection.close()
            return data.get("state") if response.status == 200 else None
        except (OSError, http.client.HTTPException, ValueError):
            return None

    def _turn(self, token: str, state: str, prompt: str) -> tuple[TurnAttempt, dict | None]:
        started = time.monotonic()
        try:
            connection, response = self._request(token, f"/api/v1/tasks/{self.code}/chat/turns", {"state": state, "prompt": prompt}, True)
        except (OSError, http.client.HTTPException) as error:
            return TurnAttempt("turn", prompt, started, time.monotonic(), None, text=prompt, error=type(error).__name__), None
        event, done, problem = None, None, None
        try:
            if response.status != 200:
                body = response.read()[:200].decode(errors="replace")
                return TurnAttempt("turn", prompt, started, time.monotonic(), response.status, text=prompt, error=body), None
            while True:
                line = response.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "done":
                    done = json.loads(line[6:])
                elif line.startswith("data: ") and event == "problem":
                    problem = json.loads(line[6:])
        except (OSError, http.client.HTTPException) as error:
            return TurnAttempt("turn", prompt, started, time.monotonic(), None, text=prompt, error=type(error).__name__, cut=True), None
        finally:
            connection.close()
        ended = time.monotonic()
        if done is not None:
            return TurnAttempt("turn", prompt, started, ended, 200, 1, text=prompt), done
        if problem is not None:
            return TurnAttempt("turn", prompt, started, ended, 200, None, text=prompt, error=problem.get("code", "problem")), None
        return TurnAttempt("turn", prompt, started, ended, None, text=prompt, error="stream ended without done", cut=True), None

    def _talk(self, n: int, token: str) -> None:
        state, i = None, 0
        while not self.stopping.is_set():
            state = state or self._start(token)
            if state is None:
                time.sleep(0.2)
                continue
            prompt = f"tell me about the museum, person {n} turn {i} {secrets.token_hex(3)}"
            i += 1
            while True:  # the same turn until it is answered (the page sends it again)
                attempt, done = self._turn(token, state, prompt)
                with self.lock:
                    self.attempts.append(attempt)
                if done is not None:
                    state = done["state"] if done["turns_left"] > 0 else None
                    break
                if self.stopping.is_set():
                    return
                time.sleep(0.2)

    def snapshot(self) -> list[TurnAttempt]:
        with self.lock:
            return list(self.attempts)


def web_fault(args, template: Path, model_dir: Path) -> list[Row]:
    from tests.endpoint_server import build_tiny_causal_lm, start_server

    root = SCRATCH / "web"
    endpoint = start_server(build_tiny_causal_lm(root / "tiny-gpt2"))
    endpoint.token_delay_s = 0.3
    model_wait_s = 20
    stack = WorkerStack(root, template, DYNABENCH_ENDPOINT_ALLOWLIST=f"127.0.0.1/32:{endpoint.port}",
                        DYNABENCH_MODEL_WAIT_S=str(model_wait_s), **UNLIMITED)
    try:
        setup = stack.json(writing_setup(model_dir, annotators=args.annotators + args.chats))
        code = stack.json(f"DEFINITION = {str(CHAT_DEFINITION)!r}\nURL = {endpoint.url!r}\n" + CHAT_SETUP)["code"]
        base = stack.gunicorn(threads=2, workers=2)
        writers = {**setup, "annotators": setup["annotators"][: args.annotators]}
        chats = Chats(base, code, setup["annotators"][args.annotators:]).start()
        marks = {}

        def fault():
            wait_for(lambda: sum(1 for a in chats.snapshot() if a.acknowledged) >= args.chats, what="chat turns to finish")
            wait_for(lambda: endpoint.in_flight >= max(2, args.chats // 2), what="chat turns streaming", every=0.02)
            victim = stack.web_workers()[0]
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()
            marks["respawned"] = wait_for(lambda: len([p for p in stack.web_workers() if p != victim]) >= 2 and time.monotonic(),
                                          what="gunicorn to start a new web process", every=0.02)
            wait_for(lambda: first_success_after(chats.snapshot(), killed) is not None, what="a chat turn finished after the kill")
            return killed, killed

        try:
            load, start, end = run_load_across(stack, base, writers, fault)
        finally:
            chats.stop()
        turns = chats.snapshot()
        dump("web-turns", turns, end)
        recovered = first_success_after(turns, end)
        # A turn the killed process was streaming stays ``running`` until the draft is read past the
        # page's wait for a model (DYNABENCH_MODEL_WAIT_S) and the stall grace: read them then.
        from annotation.chat_drafts import STALL_GRACE_S

        time.sleep(max(0.0, end + model_wait_s + STALL_GRACE_S + 2 - time.monotonic()))
        stack.python("from annotation.chat_drafts import fail_stalled\nfrom annotation.chat_models import ChatDraft\n"
                     "for draft in ChatDraft.objects.filter(turns__status='running').distinct():\n    fail_stalled(draft)")
        stored_rows = stack.query("SELECT prompt, status FROM annotation_chatturn")
        acked = {a.text for a in turns if a.acknowledged}
        done_rows = {prompt for prompt, status in stored_rows if status == "done"}
        cut = {a.text for a in turns if a.cut}
        cut_statuses = Counter(status for prompt, status in stored_rows if prompt in cut)
        chat_row = Row("web process SIGKILLed mid-stream: chat turns", during(turns, end, end), len(acked), len(acked & done_rows),
                       len(acked - done_rows), recovered,
                       f"{len(cut)} turns cut off, each sent again and answered; their stored rows: "
                       + ", ".join(f"{k} x{v}" for k, v in sorted(cut_statuses.items()))
                       + f"; gunicorn forked a new web process {marks['respawned'] - end:.1f} s after the kill")
        examples = examples_row("web process SIGKILLed mid-stream: examples", load, sqlite_examples(stack), start, end)
        return [examples, chat_row]
    finally:
        stack.stop()
        endpoint.stop()


FAULTS = {"redis": redis_fault, "postgres": postgres_fault, "horse": horse_fault, "web": web_fault}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--faults", default=",".join(FAULTS), help="Which faults, comma-separated (default: all).")
    parser.add_argument("--annotators", type=int, default=4, help="People writing examples (default 4).")
    parser.add_argument("--postgres-down", type=float, default=5, help="Seconds PostgreSQL stays stopped in its restart (default 5).")
    parser.add_argument("--keep", action="store_true", help="Keep the scratch folder (the servers' logs) afterwards.")
    parser.add_argument("--chats", type=int, default=8, help="Conversations streaming chat turns in the web fault (default 8).")
    args = parser.parse_args()
    from tests import private_postgres
    from tests.tiny_models import build_tiny_classifier

    chosen = [name.strip() for name in args.faults.split(",") if name.strip()]
    if "postgres" in chosen and not private_postgres.available():
        raise SystemExit("the postgres fault needs the PostgreSQL server binaries (initdb, pg_ctl); set PG_BINDIR")
    started = time.monotonic()
    (SCRATCH / "template").mkdir(parents=True)
    template = migrated_template(SCRATCH / "template")
    model_dir = build_tiny_classifier(SCRATCH / "tiny-bert", ["positive", "negative", "neutral"])
    rows: list[Row] = []
    try:
        for name in chosen:
            print(f"fault: {name} ...", flush=True)
            rows.extend(FAULTS[name](args, template, model_dir))
    finally:
        print()
        print("| fault | requests during it | acknowledged | stored | lost | time to recover | answers during it | notes |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            recover = f"{row.recover_s:.1f} s" if row.recover_s is not None else "never"
            print(f"| {row.fault} | {len(row.during)} | {row.acknowledged} | {row.stored} | {row.lost} | {recover} | "
                  f"{row.answers()} | {row.note} |")
        print(f"\n{args.annotators} annotators; {time.monotonic() - started:.0f} s in all"
              + (f"; the scratch folder (logs): {SCRATCH}" if args.keep else ""))
        embedded_redis.stop(SCRATCH / "var" / "redis.sock")  # this process's own, started as Django set up
        if not args.keep:
            shutil.rmtree(SCRATCH, ignore_errors=True)


if __name__ == "__main__":
    main()
