"""``GET /api/v1/me``: the caller's roles, owned tasks and example statistics."""

from annotation.models import Example, ValidationState
from tests.api.conftest import client_for


def _example(round, context, author, *, fooled, state=ValidationState.PENDING, retracted=False):
    return Example.objects.create(
        round=round, context=context, author=author, input={"text": "x"}, target={"label": "positive"},
        model_output={"label": "negative" if fooled else "positive"}, model_wrong=fooled,
        validation_state=state, retracted=retracted,
    )


def test_it_shows_my_roles_and_owned_tasks(owner):
    response = client_for(owner).get("/api/v1/me")

    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "olga"
    assert body["roles"] == ["annotator", "validator"]
    assert body["owned_tasks"] == ["hate-speech", "nli", "qa", "sentiment"]
    assert body["is_admin"] is False


def test_it_counts_my_examples_and_vmer_per_task(annotator, sentiment_task):
    round1 = sentiment_task.rounds.get(number=1)
    context = round1.contexts.first()
    _example(round1, context, annotator, fooled=True, state=ValidationState.VERIFIED_CORRECT)
    _example(round1, context, annotator, fooled=True)
    _example(round1, context, annotator, fooled=False)
    _example(round1, context, annotator, fooled=True, retracted=True)

    body = client_for(annotator).get("/api/v1/me").json()

    expected = {"collected": 3, "fooled": 2, "verified_fooled": 1, "vmer": 1 / 3, "mer": 2 / 3}
    assert body["examples"] == expected
    assert body["examples_by_task"] == [{"task": "sentiment", **expected}]


def test_it_needs_authentication(db):
    from rest_framework.test import APIClient

    response = APIClient().get("/api/v1/me")

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
