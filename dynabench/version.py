"""The version of this code, recorded on every evaluation run so that a score can be cited."""

import functools
import os
import subprocess
from pathlib import Path


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Return ``$DYNABENCH_CODE_VERSION`` if set, else the git commit of the checkout (12 hex
    digits, ``+dirty`` when tracked files differ from it), else ``"unknown"``. Computed once per process."""
    configured = os.environ.get("DYNABENCH_CODE_VERSION", "").strip()
    if configured:
        return configured[:64]
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}+dirty" if dirty else commit
