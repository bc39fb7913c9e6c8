"""Running the ``dynabench`` command line as a shell would, against a live test server.

``dynabench(*args, url=..., token=..., config=...)`` runs ``python -m dynabench_client`` (the same
``cli.main`` the installed ``dynabench`` console script runs) in a child process from the
repository root, with its own login file, and returns the ``CompletedProcess`` (text output).
``start_dynabench`` returns the running ``Popen`` instead, for commands that wait on a worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _command(args, *, url, token, config):
    env = {k: v for k, v in os.environ.items() if k not in ("DYNABENCH_URL", "DYNABENCH_API_KEY", "DYNABENCH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    env["DYNABENCH_CONFIG"] = str(config)
    if url is not None:
        env["DYNABENCH_URL"] = url
    if token is not None:
        env["DYNABENCH_API_KEY"] = token
    return [sys.executable, "-m", "dynabench_client", *[str(a) for a in args]], env


def dynabench(*args, url: str | None, token: str | None = None, config: Path, stdin: str | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``dynabench ARGS`` to its end (``timeout`` only catches a hang)."""
    command, env = _command(args, url=url, token=token, config=config)
    return subprocess.run(command, cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)


def start_dynabench(*args, url: str | None, token: str | None = None, config: Path) -> subprocess.Popen:
    """Start ``dynabench ARGS`` and return the process (stdout and stderr piped, text)."""
    command, env = _command(args, url=url, token=token, config=config)
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
