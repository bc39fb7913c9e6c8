"""Ctrl-C on ``make run`` (``scripts/run.sh``) while a worker trains a model stops everything gracefully:
the training gives way between two batches and queues itself again (``dynabench/job_stop.py``), so
no worker needs a second signal (RQ's cold shutdown) and nothing is killed.

The script runs on a var/ of its own whose database starts as a copy of the suite's migrated, empty
template, so its first run queues the default models' training with the platform's own base
encoder (minutes of work: a training is surely running when the test waits for its first
progress). Then the test sends SIGINT to the script's process group, as a terminal's Ctrl-C does,
and waits for the script to exit. A clean stop is what the script itself says (``scripts/run.sh``):
"Stopping the web server and the worker(s)..." then ``Stopped.``, exit 0, and no line of its own
between them (it names a process it had to stop with a second signal, RQ's cold shutdown, or
kill). RQ's own log lines are not the verdict: its worker may log "cold shut down" for a signal
that ended nothing. Then no process is left, and the stopped training waits for the next start
under a new job (it gave way; a killed training would not have queued itself again).
"""

import os
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest
from django.conf import settings

from cycle.stack import free_port
from dynabench import embedded_redis

pytestmark = pytest.mark.slow
HANG_S = 600  # seconds: a ceiling that only catches a hang, never a verdict on speed
SCRIPT_SAYS = ("Cold shutdown of what did not stop", "Killing what did not stop")
"""The lines ``scripts/run.sh`` prints when a process did not stop on the first signal."""


def _processes_with(var_dir) -> list[str]:
    """Command lines of the live processes whose environment names ``var_dir`` as their DYNABENCH_VAR_DIR."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if f"DYNABENCH_VAR_DIR={var_dir}".encode() not in environ.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                found.append(cmdline.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


def _training(database) -> list[tuple]:
    """``(name, status, progress, job id)`` of the models training with some progress already."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
            return connection.execute(
                "SELECT name, status, progress, json_extract(training_info, '$.job_id') FROM tasks_mlmodel "
                "WHERE status = 'training' AND progress > 0"
            ).fetchall()
    except sqlite3.OperationalError:  # the table is not there yet, or the database is busy
        return []


def test_ctrl_c_during_a_training_stops_everything_without_killing(tmp_path, stack_template):
    var_dir, port = tmp_path / "var", free_port()
    var_dir.mkdir()
    shutil.copy(stack_template, var_dir / "db.sqlite3")
    env = {k: v for k, v in os.environ.items() if k not in (
        "DATABASE_URL", "REDIS_URL", "DYNABENCH_MODELS_DIR", "MEDIA_ROOT",
        "DYNABENCH_TRAINING_BASE_ENCODER", "DYNABENCH_TRAINING_BASE_ENCODER_SHA256",
    )}
    env.update({"DYNABENCH_VAR_DIR": str(var_dir), "PORT": str(port), "WEB_WORKERS": "1", "DYNABENCH_TRAINING_THREADS": "1"})
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        # env --default-signal=INT: a suite started in the background (or under anything else that
        # ignores SIGINT) passes the ignored signal down, and bash cannot trap a signal ignored at its start.
        process = subprocess.Popen(["env", "--default-signal=INT", str(settings.BASE_DIR / "scripts" / "run.sh")],
                                   cwd=settings.BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, training = time.monotonic() + HANG_S, []
        while not training and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.5)
            training = _training(var_dir / "db.sqlite3")
        assert training, log.read_text()[-3000:]

        os.killpg(process.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole foreground process group
        assert process.wait(timeout=HANG_S) == 0, log.read_text()[-3000:]
        text = log.read_text()
        assert text.rstrip().endswith("Stopped."), text[-3000:]
        stop = text[text.rindex("Stopping the web server and the worker(s)..."):]
        said = [line for line in stop.splitlines() if line.startswith(SCRIPT_SAYS)]
        assert said == [], text[-3000:]  # the script's own signal of a stop that was not clean
        deadline = time.monotonic() + HANG_S  # the servers were told to stop before the script ended; wait for their exit
        while _processes_with(var_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_with(var_dir) == []
        assert not embedded_redis._answers(var_dir / "redis.sock")
        name = training[0][0]
        with sqlite3.connect(var_dir / "db.sqlite3") as connection:
            waiting = connection.execute(
                "SELECT status, progress, json_extract(training_info, '$.job_id') FROM tasks_mlmodel WHERE name = ? AND status = 'training'"
                " AND json_extract(training_info, '$.job_id') LIKE '%-again-%'", (name,),
            ).fetchall()
        assert waiting and waiting[0][:2] == ("training", 0.0), (training, waiting, text[-3000:])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        embedded_redis.stop(var_dir / "redis.sock")
