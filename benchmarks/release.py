"""Release benchmark: a release of 100,000 and of 1,000,000 examples written to JSONL and Parquet
on PostgreSQL, side by side: examples/second, the process's peak memory (RSS high-water mark), and
the Parquet bytes against the JSONL bytes.

Fills (once; reruns reuse them) two tasks with two closed rounds of public dev sets made of the
real DynaSent sentences, cycled (uids unique), and a third with each DynaSent sentence once (the
last row: Parquet compresses the cycled sentences far better than text that does not repeat).
After a warm-up release it builds one release of each (``releases.build.build``, the RQ job's
body, in this process) and prints one table and the ratios.
Files go to a throw-away media folder. The database is its own:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/releasebench .venv/bin/python benchmarks/release.py
"""

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/releasebench")
os.environ["DYNABENCH_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-release-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

from benchmarks._postgres import create_database  # noqa: E402

create_database(os.environ["DATABASE_URL"])

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from releases.build import build  # noqa: E402
from releases.models import Release  # noqa: E402
from releases.services import request_release  # noqa: E402
from tasks.data.seed import seed_default_tasks  # noqa: E402
from tasks.models import Dataset, DatasetItem, Round, Task  # noqa: E402

SIZES = (100_000, 1_000_000)
SOURCES = [p for p in (ROOT.parent / "shared/data/dynasent", Path("/work/shared/data/dynasent")) if p.is_dir()][0]


def sentences() -> list[tuple[str, str]]:
    rows = []
    for path in sorted(SOURCES.glob("dynasent-v1.1-round0*-*.jsonl")):
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            if row["gold_label"] in ("positive", "negative", "neutral"):
                rows.append((row["sentence"], row["gold_label"]))
    return rows


def fill(size: int | None, owner) -> Task:
    """A task ``bench-release-<size>`` with two closed rounds, each a public dev set of ``size / 2``
    items cycling through the DynaSent sentences; ``size`` None: ``bench-release-dynasent``, each
    DynaSent sentence once (the Parquet/JSONL ratio of text that does not repeat)."""
    pool = sentences()
    code = f"bench-release-{size}" if size else "bench-release-dynasent"
    size = size or len(pool) // 2 * 2
    template = Task.objects.get(code="sentiment")
    task, _ = Task.objects.get_or_create(code=code, defaults={
        "name": f"Release benchmark {size}", "kind": template.kind, "config": template.config})
    task.owners.add(owner)
    if DatasetItem.objects.filter(dataset__task=task).count() == size:
        return task
    Dataset.objects.filter(task=task).delete()
    for number in (1, 2):
        round_, _ = Round.objects.get_or_create(task=task, number=number, defaults={"status": Round.Status.CLOSED})
        dataset = Dataset.objects.create(task=task, round=round_, name=f"r{number}-dev", split="dev", access="standard",
                                         label_visibility="public")
        half = size // 2
        for start in range(0, half, 20_000):
            DatasetItem.objects.bulk_create([
                DatasetItem(dataset=dataset, uid=f"b{number}-{i}", input={"text": pool[i % len(pool)][0]},
                            target={"label": pool[i % len(pool)][1]})
                for i in range(start, min(start + 20_000, half))
            ])
    return task


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(task, owner) -> dict:
    Release.objects.filter(task=task).delete()
    release = request_release(task=task, acting_user=owner, queue=False)
    started = time.perf_counter()
    release = build(release.pk)
    seconds = time.perf_counter() - started
    assert release.status == "published", release.failure_reason
    sizes = {"jsonl": 0, "parquet": 0}
    for entry in release.manifest["files"]:
        if entry["format"] in sizes:
            sizes[entry["format"]] += entry["size"]
    return {"examples": release.example_count, "seconds": seconds, "rate": release.example_count / seconds,
            "peak": peak_mib(), **sizes}


def main():
    settings.MEDIA_ROOT = Path(os.environ["DYNABENCH_VAR_DIR"]) / "media"
    call_command("migrate", verbosity=0)
    seed_default_tasks()
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    real = fill(None, owner)
    tasks = [fill(size, owner) for size in SIZES]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # planner statistics after the bulk insert (autovacuum would, later)
            cursor.execute(f"ANALYZE {DatasetItem._meta.db_table}")
    print(f"database: {connection.vendor} {connection.settings_dict['NAME']}; process peak before: {peak_mib():.0f} MiB")
    measure(real, owner)  # warm-up: imports, URL resolver, first queries (a worker pays them once)
    results = [measure(task, owner) for task in tasks]
    results.append(measure(real, owner))
    print(f"{'examples':>10} {'seconds':>8} {'examples/s':>11} {'peak MiB':>9} {'JSONL MiB':>10} {'Parquet MiB':>12} {'Parquet/JSONL':>14}")
    for r in results:
        print(f"{r['examples']:>10} {r['seconds']:>8.1f} {r['rate']:>11.0f} {r['peak']:>9.0f} {r['jsonl'] / 2**20:>10.1f} "
              f"{r['parquet'] / 2**20:>12.1f} {r['parquet'] / r['jsonl']:>14.3f}")
    small, large, _ = results
    print(f"ratio large/small: examples {large['examples'] / small['examples']:.0f}x, time {large['seconds'] / small['seconds']:.1f}x, "
          f"throughput {large['rate'] / small['rate']:.2f}x, peak memory {large['peak'] / small['peak']:.2f}x")


if __name__ == "__main__":
    try:
        main()
    finally:
        from dynabench import embedded_redis

        embedded_redis.stop(Path(os.environ["DYNABENCH_VAR_DIR"]) / "redis.sock")  # the embedded Redis Django started in the scratch folder
