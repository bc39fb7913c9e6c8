"""``manage.py ensure_default_models`` (what ``make run`` calls) queues the default models' training on
the ``training`` RQ queue instead of training before the web server starts; a worker trains them."""

import django_rq
from django.core.management import call_command
from rq import SimpleWorker

from tasks.models import MLModel, Round
from tasks.loop.training.default_models import DEFAULT_MODEL_NAME


def ensure(django_capture_on_commit_callbacks):
    """Run the command; django-rq enqueues when the transaction commits, as it does outside tests."""
    with django_capture_on_commit_callbacks(execute=True):
        return call_command("ensure_default_models", "--epochs", "1")


def test_it_creates_the_records_at_once_and_queues_their_training_seed_models_first(db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks):
    summary = ensure(django_capture_on_commit_callbacks)

    assert summary.startswith("Default models: queued 8 for training on the 'training' queue (nli/minilm-seed, qa/minilm-seed, ")
    models = MLModel.objects.all()
    assert models.count() == 8
    assert set(models.values_list("status", "progress", "published")) == {(MLModel.Status.TRAINING, 0.0, True)}
    jobs = training_queue.get_jobs()
    assert [job.id for job in jobs] == [
        MLModel.objects.get(task__code=code, name=name).training_info["job_id"]
        for name in ("minilm-seed", "minilm-few") for code in ("nli", "qa", "sentiment", "hate-speech")
    ]
    for round1 in Round.objects.filter(number=1):
        assert list(round1.target_models.values_list("name", "status")) == [(DEFAULT_MODEL_NAME, MLModel.Status.TRAINING)]
    assert not (models_dir / "nli" / DEFAULT_MODEL_NAME).exists()


def test_a_second_run_while_they_wait_queues_nothing_more(db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks):
    ensure(django_capture_on_commit_callbacks)

    summary = ensure(django_capture_on_commit_callbacks)

    assert "queued 0 for training" in summary and "8 already queued or training" in summary
    assert training_queue.count == 8


def test_a_training_job_lost_with_its_redis_is_queued_again(db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks):
    ensure(django_capture_on_commit_callbacks)
    lost = MLModel.objects.get(task__code="qa", name="minilm-few")
    training_queue.remove(lost.training_info["job_id"])
    django_rq.get_connection("training").delete(f"rq:job:{lost.training_info['job_id']}")

    summary = ensure(django_capture_on_commit_callbacks)

    assert "queued 1 for training on the 'training' queue (qa/minilm-few)" in summary
    assert "7 already queued or training" in summary


def test_the_worker_trains_them_and_they_are_ready(db, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks):
    ensure(django_capture_on_commit_callbacks)

    django_rq.get_worker("training", worker_class=SimpleWorker).work(burst=True)

    assert set(MLModel.objects.values_list("status", "progress")) == {(MLModel.Status.UPLOADED, 1.0)}
    assert ensure(django_capture_on_commit_callbacks) == "Nothing to do: the 8 default models are present and intact."
