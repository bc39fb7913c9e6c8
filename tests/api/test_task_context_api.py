"""``GET /api/v1/tasks/{code}/context``: a context of the current round, chosen by the task's strategy."""

from rest_framework.test import APIClient

from tests.api.conftest import client_for


def test_an_annotator_gets_a_context_of_the_current_round(annotator, sentiment_task, sentiment_model):
    response = client_for(annotator).get("/api/v1/tasks/sentiment/context")

    assert response.status_code == 200
    body = response.json()
    assert body["task"] == "sentiment" and body["round"] == 1
    assert body["uid"].startswith("sent-seed-") and "prompt" in body["data"]


def test_it_needs_the_annotator_role(researcher, sentiment_task, sentiment_model):
    assert APIClient().get("/api/v1/tasks/sentiment/context").status_code == 401
    assert client_for(researcher).get("/api/v1/tasks/sentiment/context").status_code == 403


def test_it_answers_409_without_a_model_in_the_loop(annotator, sentiment_task):
    response = client_for(annotator).get("/api/v1/tasks/sentiment/context")

    assert response.status_code == 409
    assert response.json()["code"] == "no_model_in_loop"
