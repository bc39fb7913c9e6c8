"""Closing a round is safe: a preview says what it does, an empty dev or test split is refused, closing
twice or concurrently builds one set of datasets, the closed round refuses new examples (page and API),
and the next round can open in the same step with the current or a retrained model in the loop."""

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from dynabench.errors import RuleError
from tasks.models import Dataset, DatasetItem, MLModel, Round
from validation.jobs import _take_the_loop
from validation.round_close import close_round, preview_round_close
from validation.services import record_validation
from validation.tests.conftest import make_example


def _validated(task, author, owner, n):
    for _ in range(n):
        record_validation(example=make_example(task, author), validator=owner, label="correct", mode="owner")


@pytest.fixture
def in_loop(sentiment_task, owner, tiny_classifier_dir):
    model = MLModel.objects.create(task=sentiment_task, owner=owner, name="in-loop", path=str(tiny_classifier_dir),
                                   status=MLModel.Status.EVALUATED, published=True)
    sentiment_task.current_round().target_models.add(model)
    return model


def test_the_preview_counts_each_split_and_names_the_models_rescored(sentiment_task, annotator, owner, in_loop):
    _validated(sentiment_task, annotator, owner, 10)

    preview = preview_round_close(sentiment_task.current_round())

    assert (preview.validated, preview.sizes, preview.can_close) == (10, {"train": 8, "dev": 1, "test": 1}, True)
    assert preview.names["test"] == "sentiment-r1-test" and [m.name for m in preview.models] == ["in-loop"]
    client = APIClient()
    client.force_authenticate(owner)
    body = client.get("/api/v1/tasks/sentiment/rounds/1/close/preview", {"train": 0.5, "dev": 0.25, "test": 0.25}).json()
    assert [s["items"] for s in body["splits"]] == [5, 3, 2] and body["models_rescored"][0]["name"] == "in-loop"
    assert Round.objects.get(pk=preview.round.pk).status == "open"  # a preview changes nothing


def test_an_empty_test_split_is_refused_with_the_reason_and_nothing_changes(sentiment_task, annotator, owner):
    _validated(sentiment_task, annotator, owner, 5)  # 4 / 0.5 / 0.5 -> 4 / 1 / 0
    round = sentiment_task.current_round()
    assert preview_round_close(round).problems == [
        "The test split would be empty: 5 validated examples at ratios 0.8/0.1/0.1. Validate more examples or change the ratios."
    ]

    with pytest.raises(RuleError) as refused:
        close_round(round=round, acting_user=owner)

    assert refused.value.code == "empty_split" and "test split would be empty" in refused.value.message
    assert Round.objects.get(pk=round.pk).status == "open" and not Dataset.objects.exists()
    client = APIClient()
    client.force_authenticate(owner)
    response = client.post("/api/v1/tasks/sentiment/rounds/1/close", {}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "empty_split"


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_closes_build_one_set_of_datasets(sentiment_task, annotator, owner):
    """Run with ``DATABASE_URL=postgres://...``: SQLite's in-memory test database locks whole tables
    across threads (its file database, as deployed, waits for the writer instead)."""
    if connection.vendor == "sqlite":
        pytest.skip("two writers at once need the PostgreSQL test database (DATABASE_URL=postgres://...)")
    _validated(sentiment_task, annotator, owner, 10)
    round = sentiment_task.current_round()
    results, barrier = [], threading.Barrier(2)

    def close():
        barrier.wait()
        try:
            results.append([d.pk for d in close_round(round=Round.objects.get(pk=round.pk), acting_user=owner)])
        finally:
            connection.close()

    threads = [threading.Thread(target=close) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(results) == 2 and results[0] == results[1]
    assert Dataset.objects.count() == 3 and DatasetItem.objects.count() == 10
    assert set(Dataset.objects.values_list("version", flat=True)) == {1}


def test_a_closed_round_refuses_new_examples_on_the_page_and_in_the_api(client, sentiment_task, annotator, owner, in_loop):
    _validated(sentiment_task, annotator, owner, 10)
    round = sentiment_task.current_round()
    context = round.contexts.first()
    close_round(round=round, acting_user=owner)
    client.force_login(annotator)
    api = APIClient()
    api.force_authenticate(annotator)

    page = client.get("/tasks/sentiment/write/")
    created = api.post("/api/v1/examples", {"context": context.pk, "input": {"text": "late"}, "target": {"label": "positive"}}, format="json")
    offered = api.get("/api/v1/tasks/sentiment/context")

    assert page.status_code == 409 and "Round 1 of" in page.content.decode() and 'name="text"' not in page.content.decode()
    assert created.status_code in (400, 409) and created.json()["code"] == "round_closed"
    assert offered.status_code == 409 and "is closed" in offered.json()["detail"]


def test_the_next_round_opens_with_the_current_model(sentiment_task, annotator, owner, in_loop):
    _validated(sentiment_task, annotator, owner, 10)

    close_round(round=sentiment_task.current_round(), acting_user=owner, open_next=True)

    new = sentiment_task.rounds.get(number=2)
    assert new.status == "open" and list(new.target_models.all()) == [in_loop]


def test_the_next_round_takes_the_retrained_model_once_it_is_trained(sentiment_task, annotator, owner, in_loop, django_capture_on_commit_callbacks):
    _validated(sentiment_task, annotator, owner, 10)

    with django_capture_on_commit_callbacks(execute=False):
        close_round(round=sentiment_task.current_round(), acting_user=owner, open_next=True, next_loop="retrained")

    new = sentiment_task.rounds.get(number=2)
    retrained = MLModel.objects.get(status=MLModel.Status.TRAINING)
    assert list(new.target_models.all()) == [in_loop] and retrained.training_info["loop_of_round"] == new.pk
    _take_the_loop(retrained)  # what the training job does once the model is trained
    assert list(new.target_models.all()) == [retrained]
