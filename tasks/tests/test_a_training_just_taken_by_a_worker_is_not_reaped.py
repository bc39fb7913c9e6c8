"""The reaper fails a training whose model has shown no sign of life for the stale limit, unless its
job is still waiting in the queue or a worker took it within that limit: a job that waited longer than
the limit in a busy queue has an old ``updated_at`` until its first beat, and must not be failed in the
moment between the worker taking it and that beat."""

from datetime import timedelta

import django_rq
from django.utils import timezone
from rq.job import JobStatus

from tasks.models import MLModel
from tasks.loop.recovery import reap_trainings


def _training(task, owner, job_id, *, requested_ago):
    model = MLModel.objects.create(task=task, owner=owner, name=job_id, kind="hf_directory", status="training",
                                   training_info={"job_id": job_id})
    MLModel.objects.filter(pk=model.pk).update(updated_at=timezone.now() - requested_ago)
    return model


def test_a_job_started_within_the_limit_is_kept_and_one_started_before_it_is_failed(sentiment_task, owner, settings):
    settings.TRAINING_STALE_AFTER_S = 600
    queue = django_rq.get_queue("training", autocommit=True)
    jobs = {}
    for name, started_ago in (("just-taken", timedelta(seconds=5)), ("long-dead", timedelta(minutes=30)), ("waiting", None)):
        job = queue.enqueue("builtins.print", name, job_id=f"train-{name}")
        if started_ago is not None:
            job.started_at = timezone.now() - started_ago
            job.set_status(JobStatus.STARTED)
            job.save()
        jobs[name] = _training(sentiment_task, owner, job.id, requested_ago=timedelta(hours=1))

    summary = reap_trainings()

    states = {name: MLModel.objects.get(pk=model.pk).status for name, model in jobs.items()}
    assert states == {"just-taken": "training", "long-dead": "failed", "waiting": "training"}
    assert summary.startswith("1 dead trainings failed")
    queue.empty()
