"""A run enqueued inside a transaction keeps its job id, and the job reaches the queue on commit."""

import django_rq
from django.db import transaction

from leaderboard.queueing import enqueue_run
from leaderboard.models import EvaluationRun
from tasks.models import MLModel


def test_it_records_the_job_id_and_enqueues_it_on_commit(
    settings, sentiment_task, sentiment_dataset, researcher, django_capture_on_commit_callbacks
):
    settings.RQ_QUEUES = {**settings.RQ_QUEUES, "evaluation": {**settings.RQ_QUEUES["evaluation"], "ASYNC": True}}
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="m", kind=MLModel.Kind.PREDICTIONS)
    run = EvaluationRun.objects.create(model=model, dataset=sentiment_dataset)
    queue = django_rq.get_queue("evaluation")

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        enqueue_run(run.pk)
        run.refresh_from_db()
        assert run.job_id.startswith(f"evaluate-run-{run.pk}-")
        assert run.job_id not in queue.job_ids  # deferred to the commit

    try:
        assert run.job_id in queue.job_ids
    finally:
        queue.remove(run.job_id)
