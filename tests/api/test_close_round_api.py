"""Owners close a round through the API; its verified examples become train/dev/test datasets."""

from annotation.models import Example, ValidationState
from tasks.models import Dataset, Round
from tests.api.conftest import client_for


def _verified_examples(task, author, n):
    round1 = task.current_round()
    for i in range(n):
        Example.objects.create(
            round=round1, context=round1.contexts.first(), author=author, input={"text": f"sentence {i}"},
            target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=True,
            validation_state=ValidationState.VERIFIED_CORRECT,
        )


def test_an_owner_closes_a_round_into_datasets(owner, annotator, sentiment_task):
    _verified_examples(sentiment_task, annotator, 10)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/close", {"ratios": {"train": 0.6, "dev": 0.2, "test": 0.2}, "seed": 3}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["round"]["status"] == "closed"
    assert [d["name"] for d in body["datasets"]] == ["sentiment-r1-train", "sentiment-r1-dev", "sentiment-r1-test"]
    assert sum(d["item_count"] for d in body["datasets"]) == 10
    assert Round.objects.get(task=sentiment_task, number=1).status == Round.Status.CLOSED


def test_it_refuses_ratios_that_do_not_add_up(owner, annotator, sentiment_task):
    _verified_examples(sentiment_task, annotator, 3)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/close", {"ratios": {"train": 0.9, "dev": 0.9, "test": 0.1}}, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "bad_ratios"
    assert Round.objects.get(task=sentiment_task, number=1).status == Round.Status.OPEN
    assert not Dataset.objects.exists()


def test_the_owner_of_another_task_may_not_close_it(nli_owner, sentiment_task):
    response = client_for(nli_owner).post("/api/v1/tasks/sentiment/rounds/1/close", {}, format="json")

    assert response.status_code == 403
    assert Round.objects.get(task=sentiment_task, number=1).status == Round.Status.OPEN
