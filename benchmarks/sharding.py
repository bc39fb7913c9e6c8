"""Evaluation across workers: the same sharded evaluation with 1 worker and with 2 workers, each worker
pinned to one torch thread; prints both times and the speed-up (goal >= 1.7x).

Each configuration runs on a scratch platform of its own (``tests/worker_stack.py``: a migrated
SQLite file, its own embedded Redis, a shared MEDIA_ROOT as the storage, one artefact cache per
worker). The model is a small BERT built on the fly (4 layers, hidden size 256, random weights);
the dataset has ``--items`` synthetic sentiment sentences cut into shards of ``--shard`` items.
The time is the run's own ``finished_at - started_at`` (claim to merge written), measured after
every worker is listening, so worker start-up is not counted; each shard's fork, model load
(from the worker's cache) and forward are. The load average of the machine is printed before and
after: on a machine shared with other processes the second worker gets less than a core.

Usage::

    .venv/bin/python benchmarks/sharding.py [--items 8000] [--shard 1000]

It takes a few minutes; it is never run by the test suite.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dynabench.settings")

import django  # noqa: E402

django.setup()

from tests.tiny_models import build_tiny_classifier  # noqa: E402
from tests.worker_stack import WorkerStack, migrated_template  # noqa: E402

SMALL_BERT = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)

DATA = """
from tasks.models import Dataset, DatasetItem, Round, Task
from tasks.data.seed import seed_default_tasks
seed_default_tasks()
task = Task.objects.get(code="sentiment")
labels = ["positive", "negative", "neutral"]
words = ["great", "awful", "fine", "cold", "friendly", "slow", "clean", "loud", "cheap", "odd", "warm", "tiny"]
dataset = Dataset.objects.create(task=task, round=Round.objects.get_or_create(task=task, number=1)[0], name="sentiment-r1-dev")
DatasetItem.objects.bulk_create([
    DatasetItem(dataset=dataset, uid=f"u{i}", target={"label": labels[i % 3]}, input={"text": " ".join(
        f"the {words[(i + k) % 12]} room {k} was {words[(i * 7 + k) % 12]}" for k in range(1 + i % 4)) + "."})
    for i in range(ITEMS)
], batch_size=2000)
"""

REGISTER = """
from django.contrib.auth.models import User
from leaderboard.services import register_model_directory
from tasks.models import Task
admin = User.objects.create_superuser("root", "root@example.org", "pw")
register_model_directory(actor=admin, task=Task.objects.get(code="sentiment"), path=MODEL_DIR, name="small-bert", published=True)
"""


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def evaluate(workers: int, *, items: int, shard: int, model: Path, template: Path, root: Path) -> dict:
    """Run the evaluation on a fresh stack with ``workers`` one-thread workers; return its figures."""
    stack = WorkerStack(root, template, EVALUATION_SHARD_ITEMS=str(shard))
    try:
        stack.python(f"ITEMS = {items}\n" + DATA)
        for n in range(workers):
            stack.worker(f"worker-{n}", cache=root / f"cache-{n}", threads=1, queues=("evaluation", "default"))
        stack.wait_listening()
        stack.python(f"MODEL_DIR = {str(model)!r}\n" + REGISTER)
        stack.wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status IN ('done', 'failed')"),
                       timeout=3600, every=0.5, what="the run to finish")
        status, started, finished, n, error = stack.query(
            "SELECT status, started_at, finished_at, n_examples, error FROM leaderboard_evaluationrun")[0]
        if status != "done":
            raise SystemExit(f"the run failed: {error}")
        shards = stack.query("SELECT COUNT(*), SUM(seconds) FROM leaderboard_evaluationshard")[0]
        return {"seconds": _seconds(finished) - _seconds(started), "items": n, "shards": shards[0], "forward_s": shards[1]}
    finally:
        stack.stop()


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the stacks' workers and Redis on a kill too
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=8000)
    parser.add_argument("--shard", type=int, default=1000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sharding-bench-") as scratch:
        scratch = Path(scratch)
        model = build_tiny_classifier(scratch / "small-bert", ["positive", "negative", "neutral"], **SMALL_BERT)
        template = migrated_template(scratch)
        load_before = os.getloadavg()
        started = time.perf_counter()
        one = evaluate(1, items=options.items, shard=options.shard, model=model, template=template, root=scratch / "one")
        two = evaluate(2, items=options.items, shard=options.shard, model=model, template=template, root=scratch / "two")
        load_after = os.getloadavg()
    ratio = one["seconds"] / two["seconds"]
    print(f"sharded evaluation, {options.items} items in {one['shards']} shards of {options.shard}, small BERT, 1 torch thread per worker")
    print(f"1 worker : {one['seconds']:.1f} s ({one['items'] / one['seconds']:.0f} items/s; forward {one['forward_s']:.1f} s)")
    print(f"2 workers: {two['seconds']:.1f} s ({two['items'] / two['seconds']:.0f} items/s; forward {two['forward_s']:.1f} s)")
    print(f"speed-up : {ratio:.2f}x (goal >= 1.70x) {'MET' if ratio >= 1.7 else 'NOT MET'}")
    print(f"load average before {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} on {os.cpu_count()} CPUs "
          f"(whole run {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
