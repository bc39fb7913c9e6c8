"""Where the real Dynabench datasets live (``../shared/data`` from the repo root), for tests by path.

Set ``DYNABENCH_SHARED_DATA`` to point elsewhere. ``shared_file(rel)`` skips the calling
test, naming the file, when the data is not on this machine; it is never copied into the repo.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_CANDIDATES = [os.environ.get("DYNABENCH_SHARED_DATA"), REPO.parent / "shared" / "data", "/work/shared/data"]
SHARED_DATA = next((Path(p) for p in _CANDIDATES if p and Path(p).is_dir()), None)


def shared_file(relative: str) -> Path:
    """Return the path of ``relative`` under the shared data folder, or skip the test if it is absent."""
    if SHARED_DATA is None or not (SHARED_DATA / relative).is_file():
        pytest.skip(f"real data file {relative} not found (set DYNABENCH_SHARED_DATA to the shared data folder)")
    return SHARED_DATA / relative
