"""Importer benchmark: throughput and peak Python memory for a file and one 8× its size.

Builds two JSONL files from the real DynaHate dev rows (uids made unique per copy), imports
each into a fresh dataset on a throw-away SQLite database, and prints rows/second and the
tracemalloc peak of each import side by side. Memory should stay flat in the file's size
(the importer streams and writes batches of 1,000 rows), so the peak ratio should be near 1
while the size ratio is 8.

    /work/main/.venv/bin/python benchmarks/import_memory.py
"""

import csv
import json
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DYNABENCH_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-import-")
os.environ.pop("DATABASE_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from tasks.data.importers.datasets import import_dataset  # noqa: E402
from tasks.data.importers.files import FileSpec  # noqa: E402
from tasks.models import Task  # noqa: E402
from tasks.data.seed import seed_default_tasks  # noqa: E402

SOURCE = next(
    p for p in (ROOT.parent / "shared/data/dynahate/dynahate_v0.2.2_dev.csv", Path("/work/shared/data/dynahate/dynahate_v0.2.2_dev.csv"))
    if p.is_file()
)


def build(path: Path, copies: int) -> int:
    rows = list(csv.DictReader(SOURCE.open(encoding="utf-8")))
    with path.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            for row in rows:
                out.write(json.dumps({"uid": f"{row['acl.id']}-{copy}", "text": row["text"], "label": row["label"], "round": row["round"]}) + "\n")
    return copies * len(rows)


def measure(task, name: str, path: Path) -> tuple[float, float]:
    tracemalloc.start()
    started = time.perf_counter()
    result = import_dataset(task=task, name=name, spec=FileSpec(path=path, tag_field="round"), progress=False)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.added > 0
    return result.added / seconds, peak / 2**20


def main():
    call_command("migrate", verbosity=0)
    seed_default_tasks()
    task = Task.objects.get(code="hate-speech")
    tmp = Path(os.environ["DYNABENCH_VAR_DIR"])
    small, large = tmp / "small.jsonl", tmp / "large.jsonl"
    n_small, n_large = build(small, 1), build(large, 8)
    small_rate, small_peak = measure(task, "small", small)
    large_rate, large_peak = measure(task, "large", large)
    print(f"file            rows   MiB   rows/s   peak MiB")
    print(f"small      {n_small:>8} {small.stat().st_size / 2**20:5.1f} {small_rate:8.0f} {small_peak:9.1f}")
    print(f"large      {n_large:>8} {large.stat().st_size / 2**20:5.1f} {large_rate:8.0f} {large_peak:9.1f}")
    print(f"ratio large/small: size {n_large / n_small:.1f}x, peak memory {large_peak / small_peak:.2f}x, throughput {large_rate / small_rate:.2f}x")


if __name__ == "__main__":
    try:
        main()
    finally:
        from django.conf import settings

        from dynabench.embedded_redis import stop

        if settings.EMBEDDED_REDIS:
            stop(settings.EMBEDDED_REDIS_SOCKET)
        shutil.rmtree(os.environ["DYNABENCH_VAR_DIR"], ignore_errors=True)
