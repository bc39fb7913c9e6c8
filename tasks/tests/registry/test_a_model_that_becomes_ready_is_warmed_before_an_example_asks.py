"""A web process that started before a model was ready (still training) loads it once it is ready,
before any example asks: its warm-up thread (``tasks.loop.warm_up.watch``) hears the announcement
that storing the trained weights makes (``leaderboard_inputs_changed``, on commit) and warms the
registry. The test waits on the thread's own pass reports, with a ceiling only for hangs."""

import queue
import threading

import pytest
from django.db import transaction

from tasks.loop import warm_up
from tasks.loop.model_checks import directory_checksum
from tasks.loop.registry import cache_info
from tasks.models import MLModel
from tasks.signals import leaderboard_inputs_changed

pytestmark = pytest.mark.django_db(transaction=True)  # the watcher reads the database from its own thread
HANG_S = 300  # seconds: a ceiling that only catches a hang, never a verdict on speed


def _cached_ids() -> list[int]:
    return [key[0] for key in cache_info()["models"]]


def test_a_process_watching_since_before_the_model_was_ready_holds_it_once_ready(sentiment_task, tiny_classifier_dir, tmp_path):
    model = MLModel.objects.create(
        task=sentiment_task, name="in-training", kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(tmp_path / "not-trained-yet"),
    )
    sentiment_task.rounds.get(number=1).target_models.add(model)
    passes, stop = queue.Queue(), threading.Event()
    watcher = threading.Thread(target=warm_up.watch, kwargs={"stop": stop, "on_pass": passes.put}, daemon=True)
    watcher.start()
    try:
        assert passes.get(timeout=HANG_S) == "Warmed up 0 model(s), 0 failed."  # started while the model trains
        assert model.pk not in _cached_ids()

        with transaction.atomic():  # as training ends (tasks.loop.training.runs.train_model_record)
            MLModel.objects.filter(pk=model.pk).update(
                status=MLModel.Status.UPLOADED, path=str(tiny_classifier_dir), checksum=directory_checksum(tiny_classifier_dir),
            )
            leaderboard_inputs_changed.send(sender=MLModel, task=sentiment_task, models=[model], datasets=[])

        summary = passes.get(timeout=HANG_S)
        assert summary == "Warmed up 1 model(s), 0 failed."
        assert model.pk in _cached_ids()
    finally:
        stop.set()
        watcher.join(timeout=HANG_S)
    assert not watcher.is_alive()
