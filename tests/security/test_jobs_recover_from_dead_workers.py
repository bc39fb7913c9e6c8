"""Finding 7: jobs recover from a dead worker. Real RQ worker processes are killed with SIGKILL in the
middle of an evaluation shard and of a training; once they are stale the reaper re-queues the shard
alone (no partial rows or files) and the training fails with a reason, its staging folder removed;
a new worker then finishes the evaluation.

On the old code nothing ran ``requeue_stale_runs``: the model stayed ``training`` forever with its
``.training-<pid>`` folder, and the run stayed ``running``.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256
from tests.tiny_models import build_tiny_classifier
from tests.worker_stack import WorkerStack, sentiment_model_setup

pytestmark = pytest.mark.slow

#: Two shards: the killed one is retried alone while the other waits untouched in the queue.
#: STALE_S: a live worker beats far more often than that: a shard after each chunk of up to 512
#: items (here a whole shard: 1 to 3 s of work measured on two cores at load 6; the reaper fails
#: the run if the retried shard looks stale on its last try), a training every
#: ``_ProgressWriter.BEAT_S`` (5 s) while it steps. PERIOD_S: how often the reaper looks.
ITEMS, SHARD, STALE_S, PERIOD_S = 400, 200, 10, 2
#: A BERT big enough that one shard of SHARD items takes a second or more, so that a worker can be killed mid-shard.
SMALL_BERT = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)

#: Run by ``sentiment_model_setup`` before the model is published: a retraining that runs far
#: longer than the test, waited for until it has made progress, so that when the model's
#: evaluation is queued both workers end up mid-job whichever of them started first. The record
#: is made once the trainer listens: one left ``training`` longer than the stale limit before its
#: job starts would be failed by the reaper for a moment (its heartbeat is its creation).
RETRAINING = """
import time, uuid
import django_rq
from rq import Worker
from tasks.loop.training.records import model_directory
from tasks.models import MLModel
from validation.jobs import enqueue_retraining

ceiling = time.monotonic() + 300  # only catches a hang: the test's own waits report it with the logs
while not Worker.all(queue=django_rq.get_queue("training")) and time.monotonic() < ceiling:
    time.sleep(0.1)
job_id = f"retrain-sentiment-{uuid.uuid4().hex}"
trained = MLModel.objects.create(
    task=task, owner=admin, name="retrained", kind="hf_directory", status="training",
    path=str(model_directory(task, "retrained")), training_info={"job_id": job_id},
)
enqueue_retraining(task.pk, model_id=trained.pk, job_id=job_id, epochs=2000)  # far longer than the test
while not MLModel.objects.filter(pk=trained.pk, status="training", progress__gt=0).exists() and time.monotonic() < ceiling:
    time.sleep(0.1)
"""
CREATED = 'print(json.dumps({"model": model.pk, "trained": trained.pk, "directory": trained.path}))'


def test_a_killed_worker_leaves_no_partial_rows_and_everything_ends(tmp_path_factory, tiny_classifier_dir, stack_template):
    root = tmp_path_factory.mktemp("dead-worker")
    small = build_tiny_classifier(root / "small-bert", ["positive", "negative", "neutral"], **SMALL_BERT)
    stack = WorkerStack(
        root, stack_template, LEADERBOARD_BOOTSTRAP_RESAMPLES="200", EVALUATION_SHARD_ITEMS=str(SHARD), EVALUATION_STALE_AFTER_S=str(STALE_S),
        TRAINING_STALE_AFTER_S=str(STALE_S), REAPER_PERIOD_S=str(PERIOD_S),
        DYNABENCH_TRAINING_BASE_ENCODER=str(tiny_classifier_dir),
        DYNABENCH_TRAINING_BASE_ENCODER_SHA256=file_sha256(tiny_classifier_dir / WEIGHTS_FILE),
    )
    setup = ThreadPoolExecutor(1)
    try:
        # Every worker starts while the platform is set up: the reaper's survives and runs the reaper.
        stack.worker("reaper", cache=root / "cache-reaper", queues=("default",))
        stack.worker("evaluator", cache=root / "cache-evaluator", queues=("evaluation",))
        stack.worker("trainer", cache=root / "cache-trainer", queues=("training",))
        # The set-up runs beside the waits below: the evaluation starts while its process is still ending.
        platform = setup.submit(stack.json, sentiment_model_setup(ITEMS, small, before_model=RETRAINING) + CREATED)

        def rows(sql):
            if platform.done() and platform.exception():
                raise platform.exception()  # a failed set-up, at once
            return stack.query(sql)

        # Both workers mid-job: a training past its start, a shard running (polled often: a shard lasts a second or so).
        stack.wait_for(lambda: rows(
            "SELECT 1 FROM tasks_mlmodel WHERE name = 'retrained' AND status = 'training' AND progress > 0"
        ), timeout=300, every=0.2, what="the training to progress")
        stack.wait_for(lambda: rows(
            "SELECT 1 FROM leaderboard_evaluationshard WHERE status = 'running' AND attempt = 1"
        ), timeout=300, every=0.02, what="a shard to run")
        # The training saves into <name>.training-<pid> at its end; a kill while saving leaves one behind.
        staging = [root / "models" / "sentiment" / "retrained.training-424242", root / "models" / "qa" / "old.training-77"]
        for folder in staging:
            folder.mkdir(parents=True)
            (folder / "model.safetensors").write_bytes(b"half-written")
        stack.kill("evaluator")
        stack.kill("trainer")
        # The new worker imports meanwhile, and joins only once the shard is back in the queue.
        stack.worker("evaluator-2", cache=root / "cache-evaluator-2", queues=("evaluation",), standby=True)
        created = platform.result(timeout=300)

        # Nothing half-written: the killed shard stored no file, the run no score.
        killed = stack.query("SELECT id, result_file FROM leaderboard_evaluationshard WHERE status = 'running'")[0]
        assert killed[1] == ""
        others = "SELECT id, status, attempt, result_file FROM leaderboard_evaluationshard WHERE id != ? ORDER BY id"
        untouched = stack.query(others, (killed[0],))
        assert len(untouched) == ITEMS // SHARD - 1
        assert stack.query("SELECT performance, predictions_file FROM leaderboard_evaluationrun") == [(None, "")]

        # Once the stale limit has passed, the reaper re-queues the shard alone and fails the training.
        # ``limit`` only catches a hang (a reaper that never acts), never a verdict on speed.
        limit = 600
        stack.wait_for(lambda: stack.query(
            "SELECT 1 FROM leaderboard_evaluationshard WHERE id = ? AND status = 'queued' AND attempt = 1", (killed[0],)
        ), timeout=limit, what="the killed shard to be re-queued")
        assert stack.query(others, (killed[0],)) == untouched  # alone: the other shards are as the kill left them
        reason = stack.wait_for(lambda: stack.query(
            "SELECT failure_reason FROM tasks_mlmodel WHERE id = ? AND status = 'failed'", (created["trained"],)
        ), timeout=limit, what="the dead training to fail")[0][0]
        assert "stopped responding" in reason or "ended in the worker" in reason
        stack.wait_for(lambda: not any(p.exists() for p in staging), timeout=limit, what="the staging folder to go")
        error = stack.query("SELECT error FROM leaderboard_evaluationshard WHERE id = ?", (killed[0],))[0][0]
        assert "Try 1 failed" in error and "Retried" in error
        assert stack.query("SELECT status FROM leaderboard_evaluationrun") == [("running",)]

        # A new worker takes the shard again; the run is merged and the model evaluated.
        stack.release("evaluator-2")
        stack.wait_for(lambda: stack.query(
            "SELECT 1 FROM tasks_mlmodel WHERE id = ? AND status IN ('evaluated', 'failed')", (created["model"],)
        ), timeout=300, what="the evaluation to finish")
        assert stack.query("SELECT status, n_examples FROM leaderboard_evaluationrun") == [("done", ITEMS)]
        assert stack.query("SELECT status FROM tasks_mlmodel WHERE id = ?", (created["model"],)) == [("evaluated",)]
        assert stack.query("SELECT attempt, status FROM leaderboard_evaluationshard WHERE id = ?", (killed[0],)) == [(2, "done")]
    finally:
        setup.shutdown(wait=False)
        stack.stop()
