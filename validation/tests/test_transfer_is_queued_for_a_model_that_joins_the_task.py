"""A model that joins the task (``tasks.signals.leaderboard_inputs_changed`` with ``models``) gets a transfer
job for each round with validated examples, for that model only; the job then runs that model alone."""

import pytest

from annotation.models import TransferResult
from tasks.models import MLModel
from tasks.signals import leaderboard_inputs_changed
from validation import transfer
from validation.jobs import measure_transfer
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def queued(monkeypatch):
    calls = []
    monkeypatch.setattr(transfer, "enqueue_transfer", lambda round_id, *, model_ids=None: calls.append((round_id, model_ids)))
    return calls


def _model(task, name, path):
    return MLModel.objects.create(task=task, name=name, path=str(path), status=MLModel.Status.UPLOADED, published=True)


def test_it_queues_the_new_model_only_once_the_change_commits(sentiment_task, annotator, owner, tiny_classifier_dir, queued,
                                                             django_capture_on_commit_callbacks):
    example = make_example(sentiment_task, annotator)
    record_validation(example=example, validator=owner, label="correct", mode="owner")
    old = _model(sentiment_task, "old", tiny_classifier_dir)
    measure_transfer(example.round_id)

    with django_capture_on_commit_callbacks(execute=True):
        new = _model(sentiment_task, "new", tiny_classifier_dir)
        leaderboard_inputs_changed.send(sender=MLModel, task=sentiment_task, models=[new])
        assert queued == []  # not before the change commits

    assert queued == [(example.round_id, [new.pk])]
    assert measure_transfer(example.round_id, [new.pk]).startswith(f"{example.round}: 1 validated examples, 1 answers run, 1 rated")
    assert sorted(TransferResult.objects.values_list("model__name", flat=True)) == sorted([old.name, new.name])


def test_a_change_of_datasets_or_a_round_without_validated_examples_queues_nothing(sentiment_task, annotator, tiny_classifier_dir,
                                                                                   queued, django_capture_on_commit_callbacks):
    make_example(sentiment_task, annotator)  # pending: not validated
    with django_capture_on_commit_callbacks(execute=True):
        new = _model(sentiment_task, "new", tiny_classifier_dir)
        leaderboard_inputs_changed.send(sender=MLModel, task=sentiment_task, models=[new])
        leaderboard_inputs_changed.send(sender=MLModel, task=sentiment_task, datasets=[])

    assert queued == []
