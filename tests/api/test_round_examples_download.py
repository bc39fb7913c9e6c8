"""A round's verified examples: owners may download them at once, everyone once the round is closed."""

from rest_framework.test import APIClient

from annotation.models import Example, ValidationState
from tasks.models import Round
from tests.api.conftest import client_for


def _examples(task, author):
    round1 = task.current_round()
    context = round1.contexts.first()
    made = {}
    for state in (ValidationState.VERIFIED_CORRECT, ValidationState.PENDING, ValidationState.VERIFIED_INCORRECT):
        made[state] = Example.objects.create(
            round=round1, context=context, author=author, input={"text": state}, target={"label": "positive"},
            model_output={"label": "negative"}, model_wrong=True, validation_state=state,
        )
    return made


def test_an_owner_downloads_the_verified_examples_of_an_open_round(owner, annotator, sentiment_task):
    made = _examples(sentiment_task, annotator)

    response = client_for(owner).get("/api/v1/tasks/sentiment/rounds/1/examples")

    assert response.status_code == 200
    rows = response.json()["results"]
    assert [r["id"] for r in rows] == [made[ValidationState.VERIFIED_CORRECT].pk]
    assert rows[0]["annotator"] != str(annotator.pk) and len(rows[0]["annotator"]) == 16


def test_others_must_wait_until_the_round_closes(researcher, annotator, sentiment_task):
    _examples(sentiment_task, annotator)

    assert APIClient().get("/api/v1/tasks/sentiment/rounds/1/examples").status_code == 401
    response = client_for(researcher).get("/api/v1/tasks/sentiment/rounds/1/examples")
    assert response.status_code == 403
    assert "still open" in response.json()["detail"]


def test_anyone_downloads_them_once_the_round_is_closed(annotator, sentiment_task):
    made = _examples(sentiment_task, annotator)
    Round.objects.filter(task=sentiment_task, number=1).update(status=Round.Status.CLOSED)

    response = APIClient().get("/api/v1/tasks/sentiment/rounds/1/examples")

    assert response.status_code == 200
    assert [r["id"] for r in response.json()["results"]] == [made[ValidationState.VERIFIED_CORRECT].pk]
