"""For the tests of Croissant descriptions: check one with ``mlcroissant validate`` and read its
records with ``mlcroissant.Dataset`` in a child process (mlcroissant keeps global state and a cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MLCROISSANT = str(Path(sys.executable).parent / "mlcroissant")


def records_script(record_set: str) -> str:
    """The ``load`` script of ``validate_and_load`` that prints the records of ``record_set`` as a JSON list,
    each field named by the last part of its id and bytes decoded."""
    return f"""
import json, sys
import mlcroissant as mlc
records = [{{k.split("/")[-1]: (v.decode() if isinstance(v, bytes) else v) for k, v in r.items()}}
           for r in mlc.Dataset(jsonld=sys.argv[1]).records({record_set!r})]
print(json.dumps(records, default=str))
"""


def validate_and_load(jsonld: Path, load: str, cache: Path) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """Return ``(validation, loading)``: the runs of ``mlcroissant validate --jsonld <jsonld>`` and of
    ``python -c <load> <jsonld>`` (``load`` prints the records it reads as JSON on its last line), with
    mlcroissant's cache in ``cache``. Each run may take up to 300 s."""
    env = {**os.environ, "CROISSANT_CACHE": str(cache)}
    validated = subprocess.run([MLCROISSANT, "validate", "--jsonld", str(jsonld)], capture_output=True, text=True, env=env,
                               timeout=300)
    loaded = subprocess.run([sys.executable, "-c", load, str(jsonld)], capture_output=True, text=True, env=env, timeout=300)
    return validated, loaded
