"""My examples: list, retract, flag, explain; another user's example is not mine to touch."""

from annotation.models import Example
from tests.api.conftest import client_for


def _example(task, author, model, **extra):
    round1 = task.current_round()
    return Example.objects.create(
        round=round1, context=round1.contexts.first(), author=author, model=model, input={"text": "x"},
        target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=True, **extra,
    )


def test_it_lists_only_my_examples(annotator, owner, sentiment_task, sentiment_model):
    mine = _example(sentiment_task, annotator, sentiment_model)
    _example(sentiment_task, owner, sentiment_model)

    response = client_for(annotator).get("/api/v1/examples", {"task": "sentiment", "model_wrong": "true"})

    assert response.status_code == 200
    assert [e["id"] for e in response.json()["results"]] == [mine.pk]


def test_it_retracts_my_example(annotator, sentiment_task, sentiment_model):
    example = _example(sentiment_task, annotator, sentiment_model)

    response = client_for(annotator).post(f"/api/v1/examples/{example.pk}/retract")

    assert response.status_code == 200 and response.json()["retracted"] is True
    example.refresh_from_db()
    assert example.retracted


def test_it_flags_my_example_with_a_reason(annotator, sentiment_task, sentiment_model):
    example = _example(sentiment_task, annotator, sentiment_model)

    response = client_for(annotator).post(f"/api/v1/examples/{example.pk}/flag", {"reason": "typo in the label"}, format="json")

    assert response.status_code == 200
    example.refresh_from_db()
    assert example.flagged and example.metadata["flag_reason"] == "typo in the label"


def test_it_hides_another_users_example(annotator, validator, sentiment_task, sentiment_model):
    example = _example(sentiment_task, annotator, sentiment_model)

    assert client_for(validator).get(f"/api/v1/examples/{example.pk}").status_code == 404
    response = client_for(validator).post(f"/api/v1/examples/{example.pk}/retract")

    assert response.status_code == 404
    example.refresh_from_db()
    assert not example.retracted


def test_the_task_owner_sees_an_example_but_may_not_retract_it(annotator, owner, sentiment_task, sentiment_model):
    example = _example(sentiment_task, annotator, sentiment_model)

    assert client_for(owner).get(f"/api/v1/examples/{example.pk}").status_code == 200
    response = client_for(owner).post(f"/api/v1/examples/{example.pk}/retract")

    assert response.status_code == 403
    assert response.json()["code"] == "not_author"
    example.refresh_from_db()
    assert not example.retracted
