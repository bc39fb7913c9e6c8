"""A model left ``unpacking`` by a lost or failed job never waits forever: the reaper enqueues its job
again, or fails it with a reason after its last try (its archive and staging folders removed), and
a job that raises fails its model through RQ's failure callback."""

from datetime import timedelta

import django_rq
from django.utils import timezone
from rq import SimpleWorker
from rq.job import Job

from leaderboard.reaper import reap
from leaderboard.services import submit_model_archive
from tasks.loop import artefacts
from tasks.models import MLModel


def lost(model, **fields):
    """The model as the reaper finds it when its job is gone: last touched an hour ago."""
    MLModel.objects.filter(pk=model.pk).update(updated_at=timezone.now() - timedelta(hours=1), **fields)
    model.refresh_from_db()
    return model


def run_evaluation_queue():
    django_rq.get_worker("evaluation", worker_class=SimpleWorker).work(burst=True)


def test_a_model_whose_unpacking_job_was_lost_is_enqueued_again_then_unpacked(
    researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip, django_capture_on_commit_callbacks,
):
    django_rq.get_queue("evaluation").empty()
    model = lost(submit_model_archive(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="lost"),
                 unpack_job_id="unpack-model-emptied-queue")

    with django_capture_on_commit_callbacks(execute=True):  # django-rq enqueues once the transaction commits
        summary = reap()

    model.refresh_from_db()
    assert "1 unpacking models without a job enqueued again" in summary
    assert model.status == "unpacking" and model.unpack_job_id.startswith(f"unpack-model-{model.pk}-")
    job = Job.fetch(model.unpack_job_id, connection=django_rq.get_connection("evaluation"))
    assert job.get_status() == "queued" and list(job.args) == [model.pk]
    run_evaluation_queue()
    model.refresh_from_db()
    assert (model.status, model.unpack_attempts) == ("queued", 1)


def test_after_its_last_try_it_fails_with_a_reason_and_leaves_nothing(researcher, sentiment_task, tiny_sentiment_zip, media_root, settings):
    settings.UNPACK_MAX_ATTEMPTS = 2
    model = lost(submit_model_archive(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="dead"),
                 unpack_job_id="unpack-model-killed-worker", unpack_attempts=2)
    archive = model.archive
    stray = media_root / "models" / f".unpacking-{model.pk}-k1lled"
    (stray / "model").mkdir(parents=True)
    (stray / "model" / "model.safetensors").write_bytes(b"half-written")

    summary = reap()

    model.refresh_from_db()
    assert model.status == "failed"
    assert "stopped without finishing (2 tries" in model.failure_reason and "Submit the model again" in model.failure_reason
    assert not stray.exists() and not artefacts.storage().exists(archive)
    assert "1 failed, 1 stray unpacking folders" in summary


def test_a_job_that_raises_fails_its_model_through_the_failure_callback(
    researcher, sentiment_task, tiny_sentiment_zip, media_root, django_capture_on_commit_callbacks,
):
    django_rq.get_queue("evaluation").empty()
    with django_capture_on_commit_callbacks(execute=True):
        model = submit_model_archive(user=researcher, task=sentiment_task, upload=tiny_sentiment_zip, name="broken-disk")
    (media_root / "models").rmdir()
    (media_root / "models").write_text("not a folder")  # the worker cannot write the model: an OSError, not a rule

    run_evaluation_queue()

    model.refresh_from_db()
    assert model.status == "failed"
    assert model.failure_reason.startswith(f"Unpacking the archive failed: The job {model.unpack_job_id} ended in the worker: FileExistsError")
    assert model.archive == "" and not artefacts.storage().listdir("uploads")[1]
