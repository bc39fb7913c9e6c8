"""Real RQ worker processes on a database of their own, for the tests and benchmarks that need them.

``WorkerStack(root, template)`` is a scratch platform under ``root``: a SQLite file copied from a
migrated ``template`` (``migrated_template``), its own ``var/`` (so its own embedded Redis: no
worker of another checkout ever takes its jobs), a shared ``MEDIA_ROOT`` (the storage every
worker reads artefacts and files through) and ``MODELS_DIR``. ``python(code)`` runs Django code
in that environment in a child process (set-up, enqueueing); ``worker(name, cache=...)`` starts
``manage.py rqworker --with-scheduler`` with its own artefact cache and torch thread count
(``standby=True``: its imports done ahead, it becomes the worker on ``release(name)``);
``query(sql)`` reads its database directly, for polling. Its processes read the platform's
settings with the suite's cheap password hasher (``tests/stack_settings.py``) and start without
Django's system checks (``--skip-checks``: about 0.5 CPU-s a process; ``manage.py check`` has tests
of its own).

Every process of a stack is forked from one zygote per pytest process (``multiprocessing``'s
``forkserver``), which imported torch and the transformers modules a worker imports before its
first job (``settings.RQ_WORKER_PRELOAD``, none of which reads Django's settings) once: a process
of the stack then sets Django up in its own environment and runs its ``manage.py`` command (an RQ
worker, Django's development server, a ``shell -c``) as ``manage.py`` would, without importing
them again (about 4 CPU-seconds per process; a worker's start fell from about 6 to 2). It is the
way RQ's own worker starts each job's work horse: a fork of a process that imported them.
"""

from __future__ import annotations

import atexit
import functools
import gc
import json
import multiprocessing
import multiprocessing.util  # registers its exit handler on import: _kill_forked_left_running must come after it
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

from dynabench import embedded_redis

ROOT = Path(__file__).resolve().parent.parent
MANAGE = str(ROOT / "manage.py")


def sentiment_model_setup(items: int, model_dir: Path | str, *, before_model: str = "") -> str:
    """Django code, for ``WorkerStack.python``, that seeds the default tasks, makes a sentiment dev
    set ``sentiment-r1-dev`` of ``items`` items (labels cycling positive/negative/neutral), a
    superuser ``root`` (bound to ``admin``) and publishes the classifier folder ``model_dir`` as
    ``tiny-bert`` (bound to ``model``, its evaluation queued). ``before_model``: code run just
    before the model is published (``task`` and ``admin`` are bound), e.g. to get other work
    going before the evaluation is queued. Append code to extend it; it prints nothing."""
    return f"""
import json
from django.contrib.auth.models import User
from leaderboard.services import register_model_directory
from tasks.models import Dataset, DatasetItem, Round, Task
from tasks.data.seed import seed_default_tasks

seed_default_tasks()
task = Task.objects.get(code="sentiment")
labels = ["positive", "negative", "neutral"]
dataset = Dataset.objects.create(task=task, round=Round.objects.get_or_create(task=task, number=1)[0], name="sentiment-r1-dev")
DatasetItem.objects.bulk_create([
    DatasetItem(dataset=dataset, uid=f"u{{i}}", input={{"text": f"Sentence {{i}}: the staff were friendly but the room {{i % 7}} was cold."}},
                target={{"label": labels[i % 3]}})
    for i in range({int(items)})
])
admin = User.objects.create_superuser("root", "root@example.org", "pw")
{before_model}
model = register_model_directory(actor=admin, task=task, path={str(model_dir)!r}, name="tiny-bert", published=True)
"""


#: What the zygote imports besides ``settings.RQ_WORKER_PRELOAD``: modules every stack process
#: imports as Django sets up and runs a command, none of which reads Django's settings as it loads
#: (the zygote has none: each process sets Django up in its own environment), about 0.9 CPU-s a
#: process. ``multiprocessing``'s forkserver ignores a name that raises ``ImportError`` and dies on
#: any other error, so a module that reads settings as it loads (``django_rq.queues``,
#: ``django.contrib.auth.models``, ...) must not be listed.
ZYGOTE_PRELOAD = (
    "tests.worker_stack", "django.db.models", "django.http", "django.urls", "django.forms", "django.template",
    "django.core.management", "django.contrib.admin", "django.contrib.postgres.fields", "django.contrib.postgres.forms",
    "rest_framework.compat", "rest_framework.serializers", "psycopg", "requests", "jsonschema", "markdown", "rq",
)


@functools.cache
def _zygote():
    """The forkserver context, its preload set from ``settings.RQ_WORKER_PRELOAD`` and ``ZYGOTE_PRELOAD`` before its first fork.

    The zygote process starts with this process's environment and one torch thread
    (``OMP_NUM_THREADS``, read once as torch loads): each stack process sets its own count
    (``torch.set_num_threads``) from its environment's ``OMP_NUM_THREADS``."""
    from multiprocessing import forkserver

    from django.conf import settings

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*(settings.RQ_WORKER_PRELOAD if settings.configured else ()), *ZYGOTE_PRELOAD])
    saved = {key: os.environ.get(key) for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM")}
    os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    try:
        forkserver.ensure_running()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return context


def _manage(argv: list[str], env: dict, log: str, stderr_log: str | None, go: str | None) -> None:
    """In a process forked by the zygote: become a ``manage.py`` process with ``argv`` in ``env``.

    A session of its own (as ``start_new_session``), the checkout as its folder, ``env`` as its whole
    environment, its output appended to ``log`` (its errors to ``stderr_log``, else to ``log``),
    line-buffered. ``go``: a worker on standby (``WorkerStack.worker(standby=True)``): Django set up
    and ``tasks.loop.registry`` imported (what a worker imports before it forks its first work horse,
    besides the preload), it waits for the file ``go`` before it runs the command."""
    os.setsid()
    # The zygote's half a million objects (torch, transformers, Django) move to the garbage
    # collector's permanent generation (gc.freeze, Python's advice for a process that forks): its
    # collections here never walk them, nor write to the pages this process shares with the
    # zygote. ``DYNABENCH_STACK_GC_FREEZE=0`` leaves them, for benchmarks/stack_start.py.
    if env.get("DYNABENCH_STACK_GC_FREEZE") != "0":
        gc.freeze()
    # A child of the forkserver starts its own processes with it by default: RQ's scheduler must be
    # forked from the worker, as in a worker started from the command line.
    multiprocessing.set_start_method("fork", force=True)
    os.chdir(ROOT)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, log), (2, stderr_log or log)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    if env.get("OMP_NUM_THREADS"):
        import torch

        torch.set_num_threads(int(env["OMP_NUM_THREADS"]))
    sys.argv = [MANAGE, *argv]
    if go:
        import django

        django.setup()
        import tasks.loop.registry  # noqa: F401

        print("standing by", flush=True)
        while not os.path.exists(go):
            time.sleep(0.05)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


_forked: list = []


@atexit.register
def _kill_forked_left_running() -> None:
    """Kill the stack processes still running as this process exits (a test that did not stop its
    stack): ``multiprocessing`` would wait for them otherwise. Registered after ``multiprocessing``'s
    own exit handler, so run before it."""
    for process in _forked:
        if process.poll() is None:
            process.kill()


class _Forked:
    """A process of the stack forked by the zygote: the part of ``subprocess.Popen`` the stack uses."""

    def __init__(self, argv: list[str], env: dict, log: Path, *, stderr_log: Path | None = None, go: Path | None = None):
        self._process = _zygote().Process(target=_manage, args=(argv, env, str(log), stderr_log and str(stderr_log), go and str(go)),
                                          daemon=False)
        # multiprocessing would have the child import this program's main script again (a benchmark
        # that sets Django up at its top, say) before it runs ``_manage``: it runs manage.py instead.
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            self._process.start()
        finally:
            sys.modules["__main__"] = main
        self.pid = self._process.pid
        _forked.append(self)

    def poll(self) -> int | None:
        """Its exit code, or ``None`` while it runs."""
        return self._process.exitcode

    def kill(self) -> None:
        """SIGKILL it and the process it forked (a worker's work horse), as a lost machine would stop them."""
        for pid in [*_children(self.pid), self.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to end and return its exit code; raises ``subprocess.TimeoutExpired`` after ``timeout`` s."""
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(["manage.py"], timeout)
        return self._process.exitcode


#: Appended to ``WorkerStack.python`` code: the end of a set-up process, without the teardown.
_QUICK_EXIT = """
import os as _os, sys as _sys
from django.db import connections as _connections
_connections.close_all()
_sys.stdout.flush()
_sys.stderr.flush()
_os._exit(0)
"""


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _free_port() -> int:
    """A port of 127.0.0.1 free now (the server started next binds it)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def migrated_template(directory: Path) -> Path:
    """Migrate a fresh SQLite database file in ``directory`` (once) and return its path."""
    path = Path(directory) / "template.sqlite3"
    if not path.exists():
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "DYNABENCH_VAR_DIR": str(Path(directory) / "var")}
        log = Path(directory) / "migrate.log"
        try:
            if _Forked(["migrate", "-v0", "--skip-checks"], env, log).wait(timeout=600) != 0:
                raise RuntimeError(f"manage.py migrate failed:\n{log.read_text()[-4000:]}")
        finally:
            embedded_redis.stop(Path(directory) / "var" / "redis.sock")  # started by Django's set-up
    return path


#: The gunicorn worker class ``make run`` serves the platform with, read from ``scripts/run.sh`` itself.
RUN_SH_WORKER_CLASS = re.search(r"--worker-class\s+(\S+)", (ROOT / "scripts" / "run.sh").read_text()).group(1)


class _Session(subprocess.Popen):
    """A server started in a session of its own (``start_new_session=True``): ``kill`` ends its whole
    process group (gunicorn's master and its workers), not the master alone."""

    def kill(self) -> None:
        """SIGKILL every process of its group."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class WorkerStack:
    """A scratch platform for worker processes (see the module docstring)."""

    def __init__(self, root: Path, template: Path, **settings_env: str):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.db = self.root / "stack.sqlite3"
        shutil.copy(template, self.db)
        self.env = {
            key: value for key, value in os.environ.items()
            if key not in ("REDIS_URL", "DATABASE_URL", "PYTEST_XDIST_WORKER", "DJANGO_SETTINGS_MODULE")
        }
        self.env.update({
            "DJANGO_SETTINGS_MODULE": "tests.stack_settings",
            "DATABASE_URL": f"sqlite:///{self.db}", "DYNABENCH_VAR_DIR": str(self.root / "var"),
            "MEDIA_ROOT": str(self.root / "media"), "DYNABENCH_MODELS_DIR": str(self.root / "models"),
            "LOG_LEVEL": "WARNING", **settings_env,
        })
        self.workers: dict[str, _Forked] = {}
        self.standing_by: set[str] = set()  # workers started with standby=True and not yet released

    def python(self, code: str, timeout: float = 300) -> str:
        """Run ``code`` with Django set up in the stack's environment; return its stdout (raises on failure).

        Once ``code`` has run, the process closes its database connections, flushes its output and
        ends at once (``os._exit``): the interpreter's teardown takes seconds once torch is imported."""
        code += "\n" + _QUICK_EXIT
        out, err = self.root / "python.out", self.root / "python.err"
        for path in (out, err):
            path.write_text("")
        process = _Forked(["shell", "-c", code], self.env, out, stderr_log=err)
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        if returncode != 0:
            raise RuntimeError(f"stack code failed:\n{err.read_text(errors='replace')[-4000:]}")
        return out.read_text()

    def worker(self, name: str, *, cache: Path, threads: int = 1, queues=("default", "evaluation", "training"), standby: bool = False,
               **env) -> _Forked:
        """Start a worker process with its own artefact cache, pinned to ``threads`` torch threads.

        ``standby=True``: the process sets Django up and imports what a worker imports before its
        first job (torch, transformers: most of a worker's start), then waits, neither registered
        as a worker nor taking jobs, until ``release(name)``; only then it runs ``manage.py
        rqworker`` (in the same process), so that a worker can join at a precise moment without
        waiting for its imports then. ``wait_listening`` waits for it only once released."""
        log = self.root / f"{name}.log"
        log.write_text("")
        child_env = {
            **self.env, "DYNABENCH_ARTEFACT_CACHE": str(cache), "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false", **env,
        }
        go = None
        if standby:
            go = self._go(name)
            go.unlink(missing_ok=True)
            self.standing_by.add(name)
        process = _Forked(["rqworker", "--skip-checks", "--with-scheduler", "--name", f"{name}-{os.getpid()}", *queues], child_env, log, go=go)
        self.workers[name] = process
        return process

    def _go(self, name: str) -> Path:
        return self.root / f"{name}.go"

    def release(self, name: str) -> None:
        """Let the worker ``name`` started with ``standby=True`` become a worker (at once if its imports
        are done, else as soon as they are)."""
        self._go(name).touch()
        self.standing_by.discard(name)

    def _answering(self, base: str, *, timeout: float, what: str) -> str:
        """Wait until ``base``'s ``/healthz`` answers 200 (``timeout`` only catches a hang); return ``base``."""
        import urllib.request

        def up():
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        self.wait_for(up, timeout=timeout, what=what)
        return base

    def web(self, *, timeout: float = 300) -> str:
        """Start Django's development server on a free port in the stack's environment, as a process
        of the stack (``stop`` ends it, its log is ``web.log``), wait until ``/healthz`` answers 200
        and return its base URL (``http://127.0.0.1:<port>``). ``timeout`` (s) only catches a hang."""
        port = _free_port()
        log = self.root / "web.log"
        log.write_text("")
        self.workers["web"] = _Forked(["runserver", "--noreload", "--insecure", "--skip-checks", f"127.0.0.1:{port}"], self.env, log)
        return self._answering(f"http://127.0.0.1:{port}", timeout=timeout, what="the web server")

    def asgi(self, *, threads: int = 1, timeout: float = 300) -> str:
        """Start the platform as ``make run`` serves it (``dynabench.asgi`` under uvicorn, one worker
        process, ``threads`` threads for the sync views) on a free port in the stack's environment;
        wait until ``/healthz`` answers 200 and return its base URL. ``stop`` ends it; its log is
        ``asgi.log``. ``timeout`` (s) only catches a hang."""
        port = _free_port()
        log = self.root / "asgi.log"
        with open(log, "w") as out:
            self.workers["asgi"] = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "dynabench.asgi:application", "--host", "127.0.0.1", "--port", str(port),
                 "--workers", "1", "--log-level", "warning", "--no-access-log", "--no-proxy-headers"],
                cwd=ROOT, env={**self.env, "WEB_THREADS": str(threads)}, stdout=out, stderr=subprocess.STDOUT,
            )
        return self._answering(f"http://127.0.0.1:{port}", timeout=timeout, what="the ASGI server")

    def gunicorn(self, *, threads: int = 1, workers: int = 1, timeout: float = 300) -> str:
        """Start the platform as ``make run`` starts it: gunicorn serving ``dynabench.asgi`` with the
        worker class that ``scripts/run.sh`` names (``RUN_SH_WORKER_CLASS``), ``workers`` worker processes
        and ``threads`` threads each for the sync views, on a free port in the stack's environment; wait
        until ``/healthz`` answers 200 and return its base URL. ``stop`` ends its process group; its log is
        ``gunicorn.log``; ``web_workers()`` lists the pids of its worker processes. ``timeout`` (s) only
        catches a hang."""
        port = _free_port()
        log = self.root / "gunicorn.log"
        with open(log, "w") as out:
            self.workers["gunicorn"] = _Session(
                [sys.executable, "-m", "gunicorn", "dynabench.asgi:application", "--worker-class", RUN_SH_WORKER_CLASS,
                 "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--timeout", "120", "--no-control-socket",
                 "--log-level", "warning"],
                cwd=ROOT, env={**self.env, "WEB_THREADS": str(threads)}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        return self._answering(f"http://127.0.0.1:{port}", timeout=timeout, what="gunicorn")

    def web_workers(self) -> list[int]:
        """The pids of the worker processes of the gunicorn that ``gunicorn()`` started (its master's children)."""
        return _children(self.workers["gunicorn"].pid)

    def wait_listening(self, timeout: float = 300) -> None:
        """Wait until every worker started so far says it listens on its queues (RQ's "Listening
        on" line in its log), so that work enqueued afterwards is shared among all of them rather
        than taken by whichever started first. Raises ``AssertionError`` after ``timeout`` s."""
        waiting = [name for name in self.workers if name not in self.standing_by]
        self.wait_for(lambda: all("Listening on" in self.log(name, 200) for name in waiting),
                      timeout=timeout, what="the workers to listen")

    def kill(self, name: str) -> None:
        """SIGKILL a worker and the work horse it forked, as a lost machine would stop them."""
        process = self.workers[name]
        process.kill()
        process.wait(timeout=30)

    def horse(self, name: str) -> int | None:
        """The pid of the work horse the worker ``name`` forked for its current job, or None between jobs.
        RQ puts each horse in a process group of its own, which tells it from the scheduler the worker
        also forked."""
        for pid in _children(self.workers[name].pid):
            try:
                if os.getpgid(pid) == pid:
                    return pid
            except ProcessLookupError:
                continue
        return None

    def log(self, name: str, lines: int = 40) -> str:
        path = self.root / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def query(self, sql: str, params=()) -> list[tuple]:
        """Rows of a read-only SQL query on the stack's database (polling without starting Django)."""
        import sqlite3

        with sqlite3.connect(self.db, timeout=30) as conn:
            return conn.execute(sql, params).fetchall()

    def wait_for(self, condition, *, timeout: float, every: float = 0.5, what: str = "the condition"):
        """Poll ``condition()`` (the work's own completion signal: a row's state, a log line) until
        it returns something truthy (returned). ``timeout`` (s) is a ceiling that only catches a
        hang, never a verdict on speed: past it, raises ``AssertionError`` saying so, with the
        workers' logs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(every)
        raise AssertionError(f"hung: no sign of {what} after {timeout:.0f} s (a ceiling far above the normal time "
                             f"even on a loaded machine, so the work is stuck or failed); logs:\n" + "\n".join(
            f"--- {name}\n{self.log(name)}" for name in self.workers))

    def stop(self) -> None:
        """Kill every worker still running (and its work horse) and stop the embedded Redis."""
        for process in self.workers.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
        embedded_redis.stop(self.root / "var" / "redis.sock")

    def json(self, code: str):
        """Run ``code`` (which must print one JSON document last) and return it parsed."""
        return json.loads(self.python(code).strip().splitlines()[-1])
