"""schedule_evaluations queues exactly the missing (model, dataset) runs, after commit, and is idempotent."""

import django_rq
import pytest

from leaderboard.models import EvaluationRun
from leaderboard.scheduling import missing_pairs, schedule_evaluations
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, evaluate_now, make_dataset, predictions_jsonl
from tasks.models import MLModel
from tasks.signals import leaderboard_inputs_changed


@pytest.fixture
def queue(settings):
    queue = django_rq.get_queue("evaluation")
    queue.empty()
    yield queue
    queue.empty()


def _models(task, owner, tiny_classifier_dir, n=2):
    return [
        MLModel.objects.create(task=task, owner=owner, name=f"m{i}", path=str(tiny_classifier_dir), published=True,
                               status=MLModel.Status.EVALUATED)
        for i in range(n)
    ]


def test_it_queues_each_missing_pair_once_after_commit(
    sentiment_task, sentiment_datasets, researcher, tiny_classifier_dir, queue, django_capture_on_commit_callbacks
):
    models = _models(sentiment_task, researcher, tiny_classifier_dir)
    with django_capture_on_commit_callbacks(execute=True):
        runs = schedule_evaluations(sentiment_task)
        assert queue.count == 0  # nothing reaches the queue before the commit
    assert sorted((r.model_id, r.dataset_id) for r in runs) == sorted(
        (m.pk, d.pk) for m in models for d in sentiment_datasets
    )
    jobs = set(queue.job_ids)
    assert {r.job_id for r in EvaluationRun.objects.all()} == jobs and len(jobs) == 4
    assert {m.status for m in MLModel.objects.filter(pk__in=[m.pk for m in models])} == {"queued"}
    # again: nothing new
    with django_capture_on_commit_callbacks(execute=True):
        assert schedule_evaluations(sentiment_task) == []
    assert queue.count == 4 and EvaluationRun.objects.count() == 4 and missing_pairs(sentiment_task) == []


def test_a_new_dataset_queues_only_its_runs_and_hidden_sets_count(
    sentiment_task, sentiment_dataset, researcher, tiny_classifier_dir, queue, django_capture_on_commit_callbacks
):
    models = _models(sentiment_task, researcher, tiny_classifier_dir)
    with django_capture_on_commit_callbacks(execute=True):
        schedule_evaluations(sentiment_task)
    items = [(f"t{i}", {"text": t}, {"label": label}, "") for i, (_, t, label, _) in enumerate(SENTIMENT_ITEMS)]
    hidden = make_dataset(sentiment_task, "sentiment-r2-test", items, round_number=2)
    assert hidden.labels_hidden
    with django_capture_on_commit_callbacks(execute=True):
        leaderboard_inputs_changed.send(sender=None, task=sentiment_task, datasets=[hidden])
    assert sorted(EvaluationRun.objects.filter(dataset=hidden).values_list("model_id", flat=True)) == [m.pk for m in models]
    assert EvaluationRun.objects.count() == 4 and queue.count == 4


def test_models_still_training_and_empty_datasets_are_left_out(sentiment_task, sentiment_dataset, researcher, tiny_classifier_dir, queue):
    MLModel.objects.create(task=sentiment_task, owner=researcher, name="busy", path=str(tiny_classifier_dir), status=MLModel.Status.TRAINING)
    make_dataset(sentiment_task, "empty", [], round_number=None)
    assert schedule_evaluations(sentiment_task) == []


def test_a_predictions_file_is_scheduled_only_where_it_has_predictions(
    sentiment_task, sentiment_dataset, researcher, queue, django_capture_on_commit_callbacks
):
    rows = [{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS]
    with django_capture_on_commit_callbacks(execute=True):
        model = submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(rows), name="p")
    assert list(EvaluationRun.objects.filter(model=model).values_list("dataset__name", flat=True)) == ["sentiment-r1-dev"]
    make_dataset(sentiment_task, "sentiment-r2-dev", [("x1", {"text": "fine"}, {"label": "neutral"}, "")], round_number=2)
    assert schedule_evaluations(sentiment_task) == []


def test_new_content_makes_a_new_version_and_old_scores_stay_readable(
    sentiment_task, sentiment_dataset, researcher, django_capture_on_commit_callbacks
):
    from tasks.models import DatasetItem
    from tasks.services import record_dataset_content

    rows = [{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS]
    model = submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(rows), name="p")
    record_dataset_content(sentiment_dataset)
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert (run.status, run.performance, run.dataset_version, run.dataset_checksum) == ("done", 1.0, 1, sentiment_dataset.checksum)
    assert run.code_version and run.model_checksum == model.checksum
    DatasetItem.objects.filter(dataset=sentiment_dataset, uid="s1").update(target={"label": "negative"})
    with django_capture_on_commit_callbacks(execute=False):
        assert record_dataset_content(sentiment_dataset) is True
    sentiment_dataset.refresh_from_db()
    run.refresh_from_db()
    assert sentiment_dataset.version == 2
    assert (run.status, run.dataset_version, run.performance) == ("queued", 2, None)
    assert [(h["dataset_version"], h["performance"]) for h in run.history] == [(1, 1.0)]
