"""Processes that start together on a fresh var directory (web server, workers, scheduler) all
get the same generated SECRET_KEY, and none fails: before, all but the first could fail with
FileExistsError, or read the key file while it was still empty."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sixteen_processes_starting_at_once_share_one_key(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DYNABENCH_VAR_DIR"] = str(tmp_path / "var")
    # Each process waits for the same instant, then imports the settings.
    start = f"import time; time.sleep(max(0, {__import__('time').time() + 3.0} - time.time()))"
    processes = [
        subprocess.Popen([sys.executable, "-c", f"{start}; import dynabench.settings as s; print(s.SECRET_KEY)"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(16)
    ]
    results = [p.communicate(timeout=120) for p in processes]

    assert [p.returncode for p in processes] == [0] * 16, [err[-500:] for _, err in results if err]
    keys = {out.strip() for out, _ in results}
    assert len(keys) == 1 and len(keys.pop()) >= 50
    assert not list((tmp_path / "var").glob(".secret_key-*"))  # no staged copies left
    assert (tmp_path / "var" / "secret_key").stat().st_mode & 0o777 == 0o600
