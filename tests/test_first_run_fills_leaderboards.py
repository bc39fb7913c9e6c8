"""A fresh ``make run`` (``scripts/run.sh``) serves pages at once, then fills every leaderboard by itself.

The whole script runs in a child process on a fresh var/ (its own SQLite database and embedded
Redis), with a tiny BERT standing in for MiniLM as the base encoder
(``DYNABENCH_TRAINING_BASE_ENCODER``), so that its real RQ worker trains the eight default models
and evaluates them on the seed dev and test sets in about a minute. The test reads the four
leaderboards through the public API until each ranks both default models with a Dynascore, a
confidence interval and a rank range, and nothing is pending; then it stops the script.
"""

import os
import signal
import subprocess
import time

import pytest
import requests
from django.conf import settings

from cycle.stack import free_port
from dynabench import embedded_redis
from tasks.data.seed import DEFAULT_TASK_CODES
from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256
from tests.tiny_models import build_tiny_classifier

pytestmark = pytest.mark.slow
# Seconds: ceilings that only catch a hang (a run that never answers or never fills its
# leaderboards), never a verdict on speed; about 7 minutes were measured at a load average of 17 on 2 cores.
HOME_HANG_S = 600
FILL_HANG_S = 1200


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _filled(board: dict) -> bool:
    rows = board["rows"]
    return len(rows) >= 2 and not board["pending"] and all(r["ci"] and r["rank_range"] for r in rows)


@pytest.fixture
def first_run(tmp_path):
    """``scripts/run.sh`` on a fresh var/: yield (base URL, the log file); stopped afterwards."""
    tiny = build_tiny_classifier(tmp_path / "tiny-encoder", ["positive", "negative", "neutral"])
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DYNABENCH_MODELS_DIR", "MEDIA_ROOT")}
    env.update({
        "DYNABENCH_VAR_DIR": str(tmp_path / "var"), "PORT": str(port), "WEB_WORKERS": "1",
        "DYNABENCH_TRAINING_BASE_ENCODER": str(tiny),
        "DYNABENCH_TRAINING_BASE_ENCODER_SHA256": file_sha256(tiny / WEIGHTS_FILE),
        "DYNABENCH_TRAINING_THREADS": "1", "LEADERBOARD_BOOTSTRAP_RESAMPLES": "200",
    })
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(settings.BASE_DIR / "scripts" / "run.sh")], cwd=settings.BASE_DIR, env=env,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        yield f"http://127.0.0.1:{port}", log, process
    finally:
        _stop(process)
        embedded_redis.stop(tmp_path / "var" / "redis.sock")


def test_a_fresh_run_answers_at_once_and_fills_all_four_leaderboards(first_run):
    base, log, process = first_run
    started = time.monotonic()
    home = None
    while time.monotonic() - started < HOME_HANG_S and process.poll() is None:
        try:
            home = requests.get(base + "/", timeout=30)
            break
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.5)
    assert home is not None and home.status_code == 200, log.read_text()[-3000:]
    page = home.text
    assert all(f'data-task="{code}"' in page for code in DEFAULT_TASK_CODES)
    boards = {}
    while time.monotonic() - started < FILL_HANG_S and process.poll() is None:
        boards = {code: requests.get(f"{base}/api/v1/tasks/{code}/leaderboard", timeout=30).json() for code in DEFAULT_TASK_CODES}
        if all(_filled(board) for board in boards.values()):
            break
        time.sleep(3)
    unfilled = {code: (len(b["rows"]), b["pending"]) for code, b in boards.items() if not _filled(b)}
    assert not unfilled, (f"hung: leaderboards not filled after {FILL_HANG_S} s or run.sh exited", unfilled, log.read_text()[-4000:])

    for code, board in boards.items():
        assert {d["name"] for d in board["datasets"]} == {f"{code}-seed-dev", f"{code}-seed-test"}
        rows = {r["name"]: r for r in board["rows"]}
        assert set(rows) == {"minilm-seed", "minilm-few"}
        for row in rows.values():
            assert row["dynascore"] is not None and row["ci"][0] <= row["ci"][1]
            # Fairness stays unmeasured (the page names the rule) where no seed item has a gendered word or a name.
            assert all(row["metrics"][m] is not None for m in ("performance", "throughput", "memory", "robustness"))
        assert sorted(r["rank"] for r in board["rows"]) in ([1, 2], [1, 1])
    assert f"Leaderboard: {base}/tasks/sentiment/leaderboard/" in log.read_text()  # the banner, next to the home page URL
    page = requests.get(f"{base}/tasks/qa/leaderboard/", timeout=30).text
    assert "minilm-seed" in page and "minilm-few" in page and "Pending" not in page
