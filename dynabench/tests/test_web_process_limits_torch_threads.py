"""The web process (``dynabench.wsgi``) runs each forward on ``WEB_TORCH_THREADS`` torch threads,
1 unless set, whatever ``OMP_NUM_THREADS`` the machine has; a value that is not a whole number
of threads stops it with a message naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # three Django + torch start-ups: scheduled first (conftest.py)
ROOT = Path(__file__).resolve().parents[2]
PROBE = "import dynabench.wsgi, torch; print(torch.get_num_threads())"


def _start(tmp_path, name, **env):
    environ = {k: v for k, v in os.environ.items() if k not in ("WEB_TORCH_THREADS", "DYNABENCH_WARM_MODELS")}
    environ.update(DYNABENCH_VAR_DIR=str(tmp_path / name), OMP_NUM_THREADS="3", **env)
    return subprocess.Popen([sys.executable, "-c", PROBE], cwd=ROOT, env=environ, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_forwards_use_one_thread_unless_told_otherwise_and_a_bad_value_is_refused(tmp_path):
    started = {
        "default": _start(tmp_path, "default"),
        "two": _start(tmp_path, "two", WEB_TORCH_THREADS="2"),
        "bad": _start(tmp_path, "bad", WEB_TORCH_THREADS="all"),
    }
    try:
        done = {name: (p.communicate(timeout=300), p.returncode) for name, p in started.items()}
    finally:
        if "REDIS_URL" not in os.environ:  # Django's set-up started an embedded Redis in each var dir
            from dynabench import embedded_redis

            for name in started:
                embedded_redis.stop(tmp_path / name / "redis.sock")

    (out, err), code = done["default"]
    assert code == 0, err[-2000:]
    assert out.split()[-1] == "1"
    (out, err), code = done["two"]
    assert code == 0, err[-2000:]
    assert out.split()[-1] == "2"
    (out, err), code = done["bad"]
    assert code != 0
    assert "WEB_TORCH_THREADS must be a whole number of threads, 1 or more (got 'all')" in err
