"""A large evaluation split into shards gets the same results from two worker processes, each with its
own artefact cache filled through the storage, as from one worker."""

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
from tasks.seed import seed_default_tasks

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
model = register_model_directory(actor=admin, task=task, path=MODEL_DIR, name="tiny-bert", published=True)
print(json.dumps({"model": model.pk, "checksum": model.checksum}))
"""

RESULTS = """
import base64, json
from leaderboard.models import EvaluationRun, EvaluationShard
from tasks import artefacts
run = EvaluationRun.objects.get(dataset__name="sentiment-r1-dev")
shards = EvaluationShard.objects.filter(run=run, run_attempt=run.attempt)
body = artefacts.storage().open(run.predictions_file, "rb").read().decode() if run.predictions_file else ""
print(json.dumps({
    "status": run.status, "error": run.error, "performance": run.performance, "n_examples": run.n_examples,
    "metrics": {k: v for k, v in run.metrics.items() if k != "wall_seconds"}, "per_tag": run.per_tag,
    "robustness": run.robustness, "fairness": run.fairness,
    "item_results": base64.b64encode(bytes(run.item_results or b"")).decode(), "predictions": body,
    "shards": [s.status for s in shards], "model_status": run.model.status,
}))
"""


def evaluate_with_workers(root, template, model_dir, n_workers):
    """Register the tiny model on a dataset of ITEMS items, let ``n_workers`` workers evaluate it, return the run."""
    stack = WorkerStack(root, template, EVALUATION_SHARD_ITEMS=str(SHARD), LEADERBOARD_BOOTSTRAP_RESAMPLES="200")
    try:
        caches = [root / f"cache-{n}" for n in range(n_workers)]
        for n, cache in enumerate(caches):
            stack.worker(f"worker-{n}", cache=cache)
        # Every worker listens before the model's evaluation is queued: one that was still starting
        # would find the shards already taken by the other.
        stack.wait_listening()
        created = stack.json(f"ITEMS = {ITEMS}\nMODEL_DIR = {str(model_dir)!r}\n" + SETUP)
        finished = lambda: stack.query("SELECT status FROM leaderboard_evaluationrun WHERE status IN ('done', 'failed')")
        stack.wait_for(finished, timeout=900, what="the run to finish")
        result = stack.json(RESULTS)
        result["caches"] = [sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) if cache.exists() else [] for cache in caches]
        result["checksum"] = created["checksum"]
        return result
    finally:
        stack.stop()


def test_two_workers_with_their_own_caches_match_one_worker(tmp_path_factory, tiny_classifier_dir, stack_template):
    template = stack_template
    one = evaluate_with_workers(tmp_path_factory.mktemp("one"), template, tiny_classifier_dir, 1)
    two = evaluate_with_workers(tmp_path_factory.mktemp("two"), template, tiny_classifier_dir, 2)

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
