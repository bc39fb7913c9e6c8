"""Retraining, the loop closed: validated examples of every round plus the seed set become a new model."""

import pytest

from annotation.models import Example, ValidationState
from dynabench.errors import NotAllowed, RuleError
from validation.jobs import retrain_from_validated
from tasks.models import MLModel, Round
from validation.retraining import request_retraining


def _example(round_, author, text, label, state, *, retracted=False, split=""):
    return Example.objects.create(
        round=round_, context=round_.contexts.first() or round_.contexts.create(uid=f"c{round_.number}", data={"prompt": "p"}),
        author=author, input={"prompt": "p", "text": text}, target={"label": label},
        model_output={"label": "neutral"}, model_wrong=label != "neutral", validation_state=state, retracted=retracted,
        split=split,
    )


@pytest.fixture
def validated_examples(sentiment_task, annotator):
    round1 = sentiment_task.rounds.get(number=1)
    round2 = Round.objects.create(task=sentiment_task, number=2)
    return {
        "used": [
            _example(round1, annotator, "Not bad at all, I'd go back.", "positive", ValidationState.VERIFIED_CORRECT),
            _example(round1, annotator, "I wanted to love it but left hungry.", "negative", ValidationState.VERIFIED_CORRECT, split="train"),
            _example(round2, annotator, "Thrilled? Hardly. The room was damp.", "negative", ValidationState.VERIFIED_CORRECT),
        ],
        "left_out": [
            _example(round1, annotator, "Pending one.", "positive", ValidationState.PENDING),
            _example(round2, annotator, "Rejected one.", "positive", ValidationState.VERIFIED_INCORRECT),
            _example(round2, annotator, "Retracted one.", "positive", ValidationState.VERIFIED_CORRECT, retracted=True),
            _example(round1, annotator, "Held out for dev.", "positive", ValidationState.VERIFIED_CORRECT, split="dev"),
            _example(round1, annotator, "Held out for test.", "negative", ValidationState.VERIFIED_CORRECT, split="test"),
        ],
    }


def test_it_trains_a_new_model_on_validated_examples_and_the_seed_set(sentiment_task, validated_examples, tiny_encoder, models_dir):
    summary = retrain_from_validated(sentiment_task.pk, name="loop-closed", epochs=1)

    model = MLModel.objects.get(task=sentiment_task, name="loop-closed")
    assert summary.startswith("Retrained sentiment/loop-closed")
    assert "on 96 examples (seed 93, validated 3 from rounds 1, 2)" in summary
    assert model.status == MLModel.Status.UPLOADED and model.progress == 1.0
    seed, validated = model.training_info["data"]
    assert seed["source"] == "seed" and seed["count"] == 93  # the seed train split only
    assert validated == {
        "source": "validated", "count": 3, "label_counts": {"negative": 2, "positive": 1},
        "per_round": {"1": 2, "2": 1}, "example_ids": [e.pk for e in validated_examples["used"]],
    }


def test_an_owner_s_request_creates_the_record_and_enqueues_the_job_on_commit(
    sentiment_task, owner, validated_examples, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        model = request_retraining(task=sentiment_task, acting_user=owner, name="requested", epochs=1)

    model.refresh_from_db()
    assert model.status == MLModel.Status.TRAINING and model.owner == owner
    job = training_queue.fetch_job(model.training_info["job_id"])
    assert job.func is retrain_from_validated
    assert job.kwargs == {"model_id": model.pk, "epochs": 1}

    assert job.perform().startswith("Retrained sentiment/requested")
    model.refresh_from_db()
    assert model.status == MLModel.Status.UPLOADED
    assert model.training_info["job_id"] == job.id and model.training_info["requested_by"] == owner.pk


def test_rerunning_the_same_job_replaces_its_model_and_never_duplicates_it(
    sentiment_task, owner, validated_examples, tiny_encoder, models_dir, training_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        model = request_retraining(task=sentiment_task, acting_user=owner, name="twice", epochs=1)
    job = training_queue.fetch_job(model.training_info["job_id"])

    job.perform()
    job.perform()

    assert MLModel.objects.filter(task=sentiment_task, name="twice").count() == 1
    assert sorted(p.name for p in (models_dir / "sentiment").iterdir()) == ["twice"]
    model.refresh_from_db()
    assert model.status == MLModel.Status.UPLOADED


def test_only_task_owners_may_request_retraining(sentiment_task, outsider, validated_examples, training_queue):
    with pytest.raises(NotAllowed):
        request_retraining(task=sentiment_task, acting_user=outsider)

    assert not MLModel.objects.exists()
    assert training_queue.count == 0


def test_it_refuses_a_request_with_no_validated_example(sentiment_task, owner, training_queue):
    with pytest.raises(RuleError, match="no example validated as correct"):
        request_retraining(task=sentiment_task, acting_user=owner)

    assert not MLModel.objects.exists()


def test_a_failure_is_stored_on_the_record_with_a_readable_reason(sentiment_task, validated_examples, tiny_encoder, settings, models_dir):
    settings.DYNABENCH_TRAINING_BASE_ENCODER = {**settings.DYNABENCH_TRAINING_BASE_ENCODER, "sha256": "0" * 64}

    with pytest.raises(RuleError):
        retrain_from_validated(sentiment_task.pk, name="broken", epochs=1)

    model = MLModel.objects.get(name="broken")
    assert model.status == MLModel.Status.FAILED
    assert "sha256 of" in model.failure_reason and "expected " + "0" * 64 in model.failure_reason
    assert not (models_dir / "sentiment" / "broken").exists()
