"""A training job whose worker is stopping (``dynabench.job_stop``: the worker's warm stop signals its
work horse) gives way between two batches: the record stays ``training`` at progress 0, its staging
folder is gone, and the same job is queued again under a new id recorded on the record, so the
next worker to start trains it first and the reaper sees a live job."""

import django_rq
import pytest
from django.core.management import call_command
from rq import SimpleWorker

from dynabench import job_stop
from tasks.models import MLModel


@pytest.fixture
def stop_requested():
    job_stop.request()
    yield
    job_stop.clear()


def test_the_stopped_job_is_queued_again_and_the_record_waits_for_it(
    db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks, stop_requested,
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ensure_default_models", "--epochs", "1")
    first = training_queue.get_jobs()[0]
    model = MLModel.objects.get(training_info__job_id=first.id)

    with django_capture_on_commit_callbacks(execute=True):  # django-rq enqueues on commit, as outside tests
        django_rq.get_worker("training", worker_class=SimpleWorker).work(burst=True, max_jobs=1)

    model.refresh_from_db()
    assert (model.status, model.progress) == (MLModel.Status.TRAINING, 0.0)
    again = training_queue.get_jobs()[0]  # first in line for the next start
    assert model.training_info["job_id"] == again.id != first.id
    assert (again.func_name, again.args, again.kwargs, again.timeout) == (first.func_name, first.args, first.kwargs, first.timeout)
    assert first.id not in training_queue.get_job_ids()
    assert "queued again as job" in first.fetch(first.id, connection=training_queue.connection).return_value()
    assert not list(models_dir.glob("*/*.training-*"))


def test_the_job_queued_again_trains_the_record_once_the_stop_is_over(
    db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks, stop_requested,
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ensure_default_models", "--epochs", "1")
    first = training_queue.get_jobs()[0]
    model = MLModel.objects.get(training_info__job_id=first.id)
    with django_capture_on_commit_callbacks(execute=True):
        django_rq.get_worker("training", worker_class=SimpleWorker).work(burst=True, max_jobs=1)
    job_stop.clear()  # the next start
    again = MLModel.objects.get(pk=model.pk).training_info["job_id"]

    with django_capture_on_commit_callbacks(execute=True):
        django_rq.get_worker("training", worker_class=SimpleWorker).work(burst=True, max_jobs=1)

    model.refresh_from_db()
    assert (model.status, model.progress, model.training_info["job_id"]) == (MLModel.Status.UPLOADED, 1.0, again)
