"""``make run`` (``scripts/run.sh``) stops its servers when its terminal hangs up, as on Ctrl-C.

The web server and the RQ worker run in sessions of their own (so that a Ctrl-C reaches the
script alone); a SIGHUP that killed the script alone would leave them serving with nobody to stop
them. The script runs on a var/ of its own (its own SQLite database and embedded Redis), gets a
SIGHUP once it answers, and must print ``Stopped.``, exit 0, and leave no server, worker or
embedded Redis behind. Its database starts as a copy of the suite's migrated, empty template
(``stack_template``): the script's ``migrate`` then has nothing to apply (building the schema took
about 5 CPU-seconds, and ``tests/test_first_run_fills_leaderboards.py`` runs the script on a fresh
var/, migrations included).
"""

import os
import shutil
import signal
import subprocess
import time

import pytest
import requests
from django.conf import settings

from cycle.stack import free_port
from dynabench import embedded_redis
from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256
from tests.tiny_models import build_tiny_classifier

pytestmark = pytest.mark.slow
HANG_S = 600  # seconds: a ceiling that only catches a hang, never a verdict on speed


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


def test_a_hang_up_stops_the_web_server_the_worker_and_the_embedded_redis(tmp_path, stack_template):
    tiny = build_tiny_classifier(tmp_path / "tiny-encoder", ["positive", "negative", "neutral"])
    var_dir, port = tmp_path / "var", free_port()
    var_dir.mkdir()
    shutil.copy(stack_template, var_dir / "db.sqlite3")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DYNABENCH_MODELS_DIR", "MEDIA_ROOT")}
    env.update({
        "DYNABENCH_VAR_DIR": str(var_dir), "PORT": str(port), "WEB_WORKERS": "1", "DYNABENCH_WARM_MODELS": "0",
        "DYNABENCH_TRAINING_BASE_ENCODER": str(tiny), "DYNABENCH_TRAINING_BASE_ENCODER_SHA256": file_sha256(tiny / WEIGHTS_FILE),
        "DYNABENCH_TRAINING_THREADS": "1",
    })
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        # env --default-signal=HUP: a suite started under nohup (or by anything else that ignores
        # SIGHUP) passes the ignored signal down to the script, and bash can trap no signal that
        # was ignored when it started; the script would then sleep through the hang-up below.
        process = subprocess.Popen(["env", "--default-signal=HUP", str(settings.BASE_DIR / "scripts" / "run.sh")],
                                   cwd=settings.BASE_DIR, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, healthy = time.monotonic() + HANG_S, False
        while not healthy and time.monotonic() < deadline and process.poll() is None:
            try:
                healthy = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=30).status_code == 200
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.5)
        assert healthy, log.read_text()[-3000:]
        assert len(_processes_with(var_dir)) >= 3  # the script, the web server and the worker at least

        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=HANG_S) == 0, log.read_text()[-3000:]
        assert log.read_text().rstrip().endswith("Stopped."), log.read_text()[-3000:]
        deadline = time.monotonic() + HANG_S  # the servers were told to stop before the script ended; wait for their exit
        while _processes_with(var_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_with(var_dir) == [], "left running after the hang-up"
        assert not embedded_redis._answers(var_dir / "redis.sock")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        embedded_redis.stop(var_dir / "redis.sock")
