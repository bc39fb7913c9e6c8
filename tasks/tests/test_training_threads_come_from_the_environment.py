"""``DYNABENCH_TRAINING_THREADS`` (README, configuration) is read from the environment into the
settings and decides a training's torch threads: a fixed 1 when unset, the given count when set,
and the machine's idle cores only when it is 0."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynabench import embedded_redis

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import json, django; django.setup(); from django.conf import settings; from tasks.loop.training.hyperparameters import training_threads; "
    "print(json.dumps([settings.DYNABENCH_TRAINING_THREADS, training_threads(), training_threads(5)]))"
)


def threads_in_a_fresh_process(tmp_path, value: str | None) -> list[int]:
    """``[setting, training_threads(), training_threads(5)]`` in a new Python process whose environment
    has ``DYNABENCH_TRAINING_THREADS=value`` (unset when None)."""
    env = {k: v for k, v in os.environ.items() if k != "DYNABENCH_TRAINING_THREADS"}
    env.update(DJANGO_SETTINGS_MODULE="dynabench.settings", DYNABENCH_VAR_DIR=str(tmp_path / "var"), SECRET_KEY="probe-key")
    if value is not None:
        env["DYNABENCH_TRAINING_THREADS"] = value
    try:
        out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    finally:
        embedded_redis.stop(tmp_path / "var" / "redis.sock")  # started by the probe's Django set-up without REDIS_URL
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("value", "expected"), [(None, [1, 1, 5]), ("3", [3, 3, 5])])
def test_a_fixed_count_is_read_from_the_environment(tmp_path, value, expected):
    assert threads_in_a_fresh_process(tmp_path, value) == expected


def test_zero_follows_the_idle_cores(tmp_path):
    setting, threads, requested = threads_in_a_fresh_process(tmp_path, "0")
    assert (setting, requested) == (0, 5)
    assert 1 <= threads <= (os.cpu_count() or 1)
