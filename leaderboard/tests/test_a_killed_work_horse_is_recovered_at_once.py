"""A job's work horse killed mid-job (SIGKILL, as the out-of-memory killer does) while its worker lives
on: the worker runs the job's failure callback itself (``leaderboard/worker.py``:
``handle_work_horse_killed``), so the evaluation run goes back in the queue and the training fails
with the reason at once, through the reaper's own recovery, not after the stale limit. Here the stale
limits and the reaper's period are an hour: only the worker's hook can act within the test."""

import os
import signal

import pytest

from tasks.loop.training.base_encoder import WEIGHTS_FILE, file_sha256
from tests.tiny_models import build_tiny_classifier
from tests.worker_stack import WorkerStack, sentiment_model_setup

pytestmark = pytest.mark.slow

AN_HOUR = "3600"
NO_REAPER = dict(EVALUATION_STALE_AFTER_S=AN_HOUR, TRAINING_STALE_AFTER_S=AN_HOUR, REAPER_PERIOD_S=AN_HOUR)
#: A BERT and a dataset big enough that the evaluation runs for seconds: time to kill its horse.
SMALL_BERT = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)
ITEMS = 1500

#: As in tests/security/test_jobs_recover_from_dead_workers.py: a retraining far longer than the
#: test, waited for until it has made progress, bound to ``trained``.
RETRAINING = """
import time, uuid
import django_rq
from rq import Worker
from tasks.loop.training.records import model_directory
from tasks.models import MLModel
from validation.jobs import enqueue_retraining

ceiling = time.monotonic() + 300
while not Worker.all(queue=django_rq.get_queue("training")) and time.monotonic() < ceiling:
    time.sleep(0.1)
job_id = f"retrain-sentiment-{uuid.uuid4().hex}"
trained = MLModel.objects.create(
    task=task, owner=admin, name="retrained", kind="hf_directory", status="training",
    path=str(model_directory(task, "retrained")), training_info={"job_id": job_id},
)
enqueue_retraining(task.pk, model_id=trained.pk, job_id=job_id, epochs=2000)
while not MLModel.objects.filter(pk=trained.pk, status="training", progress__gt=0).exists() and time.monotonic() < ceiling:
    time.sleep(0.1)
"""


def kill_the_horse(stack, name):
    horse = stack.wait_for(lambda: stack.horse(name), timeout=300, every=0.02, what="the work horse")
    os.kill(horse, signal.SIGKILL)


def test_a_killed_evaluation_goes_back_in_the_queue_at_once_and_finishes(tmp_path_factory, stack_template):
    root = tmp_path_factory.mktemp("killed-evaluation")
    small = build_tiny_classifier(root / "small-bert", ["positive", "negative", "neutral"], **SMALL_BERT)
    stack = WorkerStack(root, stack_template, LEADERBOARD_BOOTSTRAP_RESAMPLES="50", EVALUATION_SHARD_ITEMS="100000", **NO_REAPER)
    try:
        stack.worker("evaluator", cache=root / "cache", queues=("evaluation",))
        stack.wait_listening()
        stack.python(sentiment_model_setup(ITEMS, small))
        stack.wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status = 'running'"),
                       timeout=300, every=0.02, what="the evaluation to run")
        kill_the_horse(stack, "evaluator")

        # Re-queued by the worker's hook, taken again and finished: its second attempt.
        stack.wait_for(lambda: stack.query("SELECT 1 FROM leaderboard_evaluationrun WHERE status = 'done'"),
                       timeout=300, what="the evaluation to be re-queued and finish")
        assert stack.query("SELECT attempt, n_examples FROM leaderboard_evaluationrun") == [(2, ITEMS)]
        assert "WorkHorseKilled" in stack.log("evaluator", 400) and "SIGKILL" in stack.log("evaluator", 400)
    finally:
        stack.stop()


def test_a_killed_training_fails_at_once_with_the_reason(tmp_path_factory, stack_template, tiny_classifier_dir):
    root = tmp_path_factory.mktemp("killed-training")
    stack = WorkerStack(
        root, stack_template, DYNABENCH_TRAINING_BASE_ENCODER=str(tiny_classifier_dir),
        DYNABENCH_TRAINING_BASE_ENCODER_SHA256=file_sha256(tiny_classifier_dir / WEIGHTS_FILE), **NO_REAPER,
    )
    try:
        stack.worker("trainer", cache=root / "cache", queues=("training",))
        created = stack.json(sentiment_model_setup(30, tiny_classifier_dir, before_model=RETRAINING)
                             + 'print(json.dumps({"trained": trained.pk}))')
        kill_the_horse(stack, "trainer")

        reason = stack.wait_for(lambda: stack.query(
            "SELECT failure_reason FROM tasks_mlmodel WHERE id = ? AND status = 'failed'", (created["trained"],)
        ), timeout=300, what="the killed training to fail")[0][0]
        assert "WorkHorseKilled" in reason and "SIGKILL" in reason
        assert not list((root / "models").glob("*/*.training-*"))  # its staging folder removed
    finally:
        stack.stop()
