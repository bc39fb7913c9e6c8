"""Owners open a task's next round through the API (``tasks.services.open_round``)."""

from tasks.models import MLModel, Round
from tests.api.conftest import client_for


def _close_round_one(task):
    Round.objects.filter(task=task, number=1).update(status=Round.Status.CLOSED)


def test_it_opens_the_next_round_with_models_in_the_loop(owner, sentiment_task, sentiment_model):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {"target_models": [sentiment_model.pk]}, format="json")

    assert response.status_code == 201
    assert response.json()["number"] == 2 and response.json()["status"] == "open"
    assert list(sentiment_task.rounds.get(number=2).target_models.all()) == [sentiment_model]


def test_it_refuses_while_the_previous_round_is_open(owner, sentiment_task):
    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {}, format="json")

    assert response.status_code == 400
    assert response.json() == {"code": "other_round_open", "detail": "round 1 of sentiment is still open; close it first", "field": "status"}
    assert sentiment_task.rounds.count() == 1


def test_it_refuses_a_model_of_another_task(owner, sentiment_task, nli_task):
    _close_round_one(sentiment_task)
    nli_model = MLModel.objects.create(task=nli_task, name="nli-model", path="/nowhere")

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {"target_models": [nli_model.pk]}, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "model_not_of_task"
    assert response.json()["field"] == "target_models"
    assert sentiment_task.rounds.count() == 1


def test_it_refuses_the_owner_of_another_task(nli_owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(nli_owner).post("/api/v1/tasks/sentiment/rounds", {}, format="json")

    assert response.status_code == 403
    assert response.json() == {"code": "permission_denied", "detail": "Only an owner of this task may do this."}
    assert sentiment_task.rounds.count() == 1
