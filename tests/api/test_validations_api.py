"""Validators get the next example and record verdicts through the API (``validation.services``)."""

from django.contrib.auth.models import Group

from annotation.models import Example, ValidationState
from tests.api.conftest import client_for
from validation.models import Validation


def _fooling_example(task, author, model):
    round1 = task.current_round()
    return Example.objects.create(
        round=round1, context=round1.contexts.first(), author=author, model=model, input={"text": "Great, another delay."},
        target={"label": "negative"}, model_output={"label": "positive", "probs": {}}, model_wrong=True,
    )


def test_a_validator_is_handed_the_next_fooling_example(validator, annotator, sentiment_task, sentiment_model):
    example = _fooling_example(sentiment_task, annotator, sentiment_model)

    response = client_for(validator).get("/api/v1/validations/next", {"task": "sentiment"})

    assert response.status_code == 200
    assert response.json()["id"] == example.pk
    assert response.json()["context_data"] == example.context.data
    example.refresh_from_db()
    assert example.leased_to == validator


def test_it_answers_204_when_nothing_is_left(validator, sentiment_task):
    response = client_for(validator).get("/api/v1/validations/next", {"task": "sentiment"})

    assert response.status_code == 204


def test_a_verdict_is_recorded_and_updates_the_examples_state(validator, annotator, sentiment_task, sentiment_model):
    example = _fooling_example(sentiment_task, annotator, sentiment_model)
    client = client_for(validator)
    assert client.get("/api/v1/validations/next?task=sentiment").json()["id"] == example.pk  # the queue leases it

    response = client.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json")

    assert response.status_code == 201
    assert response.json()["example_state"] == "pending"
    example.refresh_from_db()
    assert (example.validation_count, example.correct_count) == (1, 1)


def test_an_owner_decides_at_once_in_owner_mode(owner, annotator, sentiment_task, sentiment_model):
    example = _fooling_example(sentiment_task, annotator, sentiment_model)

    response = client_for(owner).post("/api/v1/validations", {"example": example.pk, "label": "correct", "mode": "owner"}, format="json")

    assert response.status_code == 201
    example.refresh_from_db()
    assert example.validation_state == ValidationState.VERIFIED_CORRECT


def test_it_refuses_validating_my_own_example(annotator, sentiment_task, sentiment_model):
    annotator.groups.add(Group.objects.get(name="validator"))
    example = _fooling_example(sentiment_task, annotator, sentiment_model)

    response = client_for(annotator).post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "own_example"
    assert not Validation.objects.exists()


def test_it_refuses_a_second_verdict_by_the_same_validator(validator, annotator, sentiment_task, sentiment_model):
    example = _fooling_example(sentiment_task, annotator, sentiment_model)
    client = client_for(validator)
    client.get("/api/v1/validations/next?task=sentiment")
    client.post("/api/v1/validations", {"example": example.pk, "label": "correct"}, format="json")

    response = client.post("/api/v1/validations", {"example": example.pk, "label": "incorrect"}, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "already_validated"
    assert Validation.objects.filter(example=example).count() == 1


def test_it_refuses_owner_mode_from_a_non_owner(validator, annotator, sentiment_task, sentiment_model):
    example = _fooling_example(sentiment_task, annotator, sentiment_model)

    response = client_for(validator).post("/api/v1/validations", {"example": example.pk, "label": "correct", "mode": "owner"}, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "not_owner"
    assert not Validation.objects.exists()


def test_it_refuses_an_unknown_example(validator, sentiment_task):
    response = client_for(validator).post("/api/v1/validations", {"example": 987654, "label": "correct"}, format="json")

    assert response.status_code == 400
    assert response.json()["detail"] == "example: No example with id 987654."
