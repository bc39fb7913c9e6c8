"""A large evaluation split into shards gets the same results from two worker processes, each with its
own artefact cache filled through the storage, as from one worker.

The two platforms (one worker, two workers) run side by side, each on its own database and Redis."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.worker_stack import WorkerStack

pytestmark = pytest.mark.slow

ITEMS = 90
SHARD = 30

SETUP = """
import json
from django.contrib.auth.models import User
from leaderboard.services import register_model_directory
from tasks.models import Dataset, DatasetItem, Round, Task
from tasks.data.seed import seed_default_tasks

seed_default_tasks()
task = Task.objects.get(code="sentiment")
labels = ["positive", "negative", "neutral"]
words = ["great", "awful", "fine", "cold", "friendly", "slow", "clean", "loud", "cheap", "odd"]
dataset = Dataset.objects.create(task=task, round=Round.objects.get_or_create(task=task, number=1)[0], name="sentiment-r1-dev")
DatasetItem.objects.bulk_create([
    DatasetItem(dataset=dataset, uid=f"u{i}", input={"text": f"The {words[i % 10]} room number {i} was {words[(i * 7) % 10]}."},
                target={"label": labels[i % 3]}, tag=["food", "service", ""][i % 3])
    for i in range(ITEMS)
])
admin = User.objects.create_superuser("root", "root@example.org", "pw")
# Every worker listens before the model's evaluation is queued: one that was still starting would
# find the shards already taken by the other. (A worker registers just before it listens.)
import time, django_rq
from rq import Worker
ceiling = time.monotonic() + 300  # only catches a hang
while len(Worker.all(queue=django_rq.get_queue("evaluation"))) < N_WORKERS:
    if time.monotonic() > ceiling:
        raise RuntimeError(f"hung: {N_WORKERS} workers did not start listening within 300 s")
    time.sleep(0.1)
model = register_model_directory(actor=admin, task=task, path=MODEL_DIR, name="tiny-bert", published=True)
print(json.dumps({"model": model.pk, "checksum": model.checksum}))
"""

#: The run and its model, read from the stack's database once the run has ended.
RUN = """
SELECT r.id, r.attempt, r.status, r.error, r.performance, r.n_examples, r.metrics, r.per_tag, r.robustness, r.fairness,
       r.item_results, r.predictions_file, m.status
FROM leaderboard_evaluationrun r JOIN tasks_dataset d ON d.id = r.dataset_id JOIN tasks_mlmodel m ON m.id = r.model_id
WHERE d.name = 'sentiment-r1-dev' AND r.status IN ('done', 'failed')
"""


def run_results(stack):
    """Wait for the run to end; return its outcome (its predictions file read from the stack's storage, ``media/``)."""
    (pk, attempt, status, error, performance, n_examples, metrics, per_tag, robustness, fairness, item_results,
     predictions_file, model_status) = stack.wait_for(lambda: stack.query(RUN), timeout=900, what="the run to finish")[0]
    shards = stack.query('SELECT status FROM leaderboard_evaluationshard WHERE run_id = ? AND run_attempt = ? ORDER BY "index"', (pk, attempt))
    return {
        "status": status, "error": error, "performance": performance, "n_examples": n_examples,
        "metrics": {k: v for k, v in json.loads(metrics).items() if k != "wall_seconds"}, "per_tag": json.loads(per_tag),
        "robustness": robustness, "fairness": fairness, "item_results": bytes(item_results or b""),
        "predictions": (stack.root / "media" / predictions_file).read_text() if predictions_file else "",
        "shards": [row[0] for row in shards], "model_status": model_status,
    }


def evaluate_with_workers(root, template, model_dir, n_workers):
    """Register the tiny model on a dataset of ITEMS items, let ``n_workers`` workers evaluate it, return the run."""
    stack = WorkerStack(root, template, EVALUATION_SHARD_ITEMS=str(SHARD), LEADERBOARD_BOOTSTRAP_RESAMPLES="200")
    try:
        caches = [root / f"cache-{n}" for n in range(n_workers)]
        for n, cache in enumerate(caches):
            stack.worker(f"worker-{n}", cache=cache)
        # The set-up runs while the workers start, and queues the evaluation once they all listen.
        created = stack.json(f"ITEMS = {ITEMS}\nN_WORKERS = {n_workers}\nMODEL_DIR = {str(model_dir)!r}\n" + SETUP)
        result = run_results(stack)
        result["caches"] = [sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) if cache.exists() else [] for cache in caches]
        result["checksum"] = created["checksum"]
        return result
    finally:
        stack.stop()


def test_two_workers_with_their_own_caches_match_one_worker(tmp_path_factory, tiny_classifier_dir, stack_template):
    with ThreadPoolExecutor(2) as pool:
        one, two = pool.map(lambda n: evaluate_with_workers(tmp_path_factory.mktemp(f"workers-{n}"), stack_template, tiny_classifier_dir, n), (1, 2))

    assert one["status"] == two["status"] == "done", (one["error"], two["error"])
    assert one["shards"] == two["shards"] == ["done"] * (ITEMS // SHARD)
    assert one["model_status"] == two["model_status"] == "evaluated"
    # Every worker that took a shard loaded the model from the storage into its own cache.
    assert one["caches"] == [[one["checksum"]]]
    assert two["caches"] == [[two["checksum"]], [two["checksum"]]]
    assert one["n_examples"] == two["n_examples"] == ITEMS
    for field in ("performance", "metrics", "per_tag", "robustness", "fairness", "item_results", "predictions"):
        assert one[field] == two[field], field
    assert len(one["predictions"].splitlines()) == ITEMS
