"""Each kind of job goes on its own queue, and ``make run`` gives the short jobs a worker of their own.

Notifications, leaderboard rebuilds and the reaper go on ``default``; trainings (default models,
retraining from validated examples, data-centric selections) on ``training``; evaluations on
``evaluation``. ``scripts/run.sh`` starts one worker that takes ``default`` and nothing else (so a
proposer's notification never waits behind an hour of training), training workers (which evaluate
when nothing is left to train) and evaluation workers (so on a first run each model is evaluated as
soon as it is trained, while the next one trains)."""

import re

import django_rq
import pytest
from django.conf import settings

from leaderboard import queueing
from leaderboard.reaper import ensure_reaper
from tasks.jobs import enqueue_default_training
from tasks.models import MLModel
from tasks.signals import example_settled, model_evaluation_finished
from validation.jobs import enqueue_retraining

QUEUES = ("default", "training", "evaluation")


@pytest.fixture
def empty_queues():
    queues = {name: django_rq.get_queue(name) for name in QUEUES}
    for queue in queues.values():
        queue.empty()
    yield queues
    for queue in queues.values():
        queue.empty()


def _jobs(queues) -> dict[str, set[str]]:
    return {name: {job.func_name for job in queue.get_jobs()} for name, queue in queues.items()}


def test_each_job_goes_on_the_queue_of_its_kind(sentiment_task, empty_queues, django_capture_on_commit_callbacks):
    model = MLModel.objects.create(task=sentiment_task, name="m", kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING)

    with django_capture_on_commit_callbacks(execute=True):
        model_evaluation_finished.send(sender=MLModel, model_id=model.pk, status="evaluated", reason="")
        example_settled.send(sender=None, example_id=1, author_id=1, state="verified_correct")
        queueing.enqueue_recompute(sentiment_task.pk)
        queueing.enqueue_arena_board(sentiment_task.pk)
        ensure_reaper(django_rq.get_connection("default"))
        enqueue_default_training(model)
        enqueue_retraining(sentiment_task.pk, model_id=model.pk, job_id="retrain-test")
        queueing.enqueue_selection_training(model.pk)
        queueing.enqueue_run(1)
        queueing.enqueue_shard(1)
        queueing.enqueue_merge(1)

    assert _jobs(empty_queues) == {
        "default": {
            "community.jobs.notify_model_finished", "community.jobs.notify_example_settled",
            "leaderboard.jobs.recompute_leaderboard", "leaderboard.jobs.rebuild_arena_board", "leaderboard.reaper.reap",
        },
        "training": {"tasks.jobs.train_default_model", "validation.jobs.retrain_from_validated", "leaderboard.jobs.train_selection"},
        "evaluation": {"leaderboard.jobs.evaluate_run", "leaderboard.jobs.evaluate_shard", "leaderboard.jobs.merge_shards"},
    }


def test_make_run_gives_the_short_jobs_a_worker_that_takes_nothing_else():
    script = (settings.BASE_DIR / "scripts" / "run.sh").read_text()

    workers = [line.split() for line in re.findall(r"^\s*rq_worker (.+)$", script, flags=re.M)]

    assert workers == [["default"], ["training", "evaluation"], ["evaluation"]]
