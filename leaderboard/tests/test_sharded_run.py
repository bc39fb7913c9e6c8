"""A run larger than a shard is split into item-id ranges, each evaluated alone, then merged into the same
scores as an unsharded run; a shard that fails twice fails the run with its reason."""

import shutil
from pathlib import Path

from leaderboard import jobs
from leaderboard.models import EvaluationRun, EvaluationShard
from tasks.loop import artefacts
from tasks.loop.registry import clear_cache

COMPARED = ("n_examples", "performance", "per_tag", "robustness", "fairness")


def run_inline(model, django_capture_on_commit_callbacks):
    """Evaluate the model's single run as workers would, each job run here in turn; return the run."""
    jobs.evaluate_model(model.pk, enqueue=False)
    run = EvaluationRun.objects.get(model=model)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        jobs.evaluate_run(run.pk)
    for shard_id in EvaluationShard.objects.filter(run=run, status="queued").order_by("index").values_list("pk", flat=True):
        for _ in range(2):  # a failed shard is retried alone
            jobs.evaluate_shard(shard_id)
            if EvaluationShard.objects.get(pk=shard_id).status != "queued":
                break
    run.refresh_from_db()
    if run.status == "running":
        jobs.merge_shards(run.pk)
        run.refresh_from_db()
    return run, queued


def test_a_sharded_run_scores_like_an_unsharded_one(submitted_model, sentiment_dataset, settings, django_capture_on_commit_callbacks):
    whole, _ = run_inline(submitted_model, django_capture_on_commit_callbacks)
    assert not whole.shards.exists()
    settings.EVALUATION_SHARD_ITEMS = 2
    sharded, queued = run_inline(submitted_model, django_capture_on_commit_callbacks)

    shards = list(sharded.shards.order_by("index"))
    assert [(s.n_items, s.status, s.attempt) for s in shards] == [(2, "done", 1)] * 3
    assert len(queued) == 1  # the three shard jobs, queued once the split commits
    assert sharded.status == "done" and sharded.attempt == whole.attempt + 1
    for field in COMPARED:
        assert getattr(sharded, field) == getattr(whole, field), field
    assert bytes(sharded.item_results) == bytes(whole.item_results)
    assert {k: v for k, v in sharded.metrics.items() if k != "wall_seconds"} == {k: v for k, v in whole.metrics.items() if k != "wall_seconds"}
    store = artefacts.storage()
    assert store.exists(sharded.predictions_file)
    assert not any(store.exists(s.result_file) for s in shards)  # the shards' files are gone once merged


def test_a_shard_that_fails_twice_fails_the_run_with_its_reason(submitted_model, sentiment_dataset, settings, django_capture_on_commit_callbacks):
    settings.EVALUATION_SHARD_ITEMS = 4
    jobs.evaluate_model(submitted_model.pk, enqueue=False)
    run = EvaluationRun.objects.get(model=submitted_model)
    jobs.evaluate_run(run.pk)
    first, second = EvaluationShard.objects.filter(run=run).order_by("index")
    assert jobs.evaluate_shard(first.pk).endswith("(1/2 shards)")
    # The artefact disappears before the second shard runs: it cannot load the model.
    artefacts.unpublish(submitted_model.checksum)
    shutil.rmtree(Path(submitted_model.path))
    clear_cache()
    assert "try 1 failed" in jobs.evaluate_shard(second.pk)
    second.refresh_from_db()
    assert second.status == "queued" and "Try 1 failed" in second.error
    assert "failed 2 times" in jobs.evaluate_shard(second.pk)
    run.refresh_from_db()
    submitted_model.refresh_from_db()
    assert run.status == "failed" and run.error.startswith(f"Shard 1 (items {second.first_item}–{second.last_item}) failed 2 times:")
    assert run.performance is None and run.predictions_file == ""
    assert submitted_model.status == "failed"
