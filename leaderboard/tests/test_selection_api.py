"""``POST /api/v1/models/selections``: a participant submits a selection of a data-centric task's pool;
its training is queued; a bad selection gets a 400 naming the first offender, and nothing is stored."""

import pytest
from rest_framework.test import APIClient

from leaderboard.tests.conftest import make_dataset
from tasks.models import MLModel, Task

CONFIG = {
    "labels": ["positive", "negative"], "context_fields": [], "input_fields": [{"name": "text"}], "model_inputs": ["text"],
    "model_wrong": {"rule": "label_differs"}, "perf_metric": "accuracy",
    "data_centric": {"pool": "pool", "budget": 2, "seed": 5},
}


@pytest.fixture
def task(db):
    task = Task.objects.create(code="select", name="Select", kind="data_centric", collecting=False, config=CONFIG)
    make_dataset(task, "pool", [(f"p{i}", {"text": f"text {i}"}, {"label": "positive" if i % 2 else "negative"}, "") for i in range(4)],
                 round_number=None, access="standard")
    return task


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def test_a_selection_is_stored_and_its_training_queued(task, api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post("/api/v1/models/selections", {"task": "select", "name": "two-items", "uids": ["p1", "p2"]}, format="json")
    assert response.status_code == 201, response.json()
    model = MLModel.objects.get(pk=response.json()["id"])
    assert (model.status, model.training_info["selection"]) == ("training", ["p1", "p2"])
    assert len(callbacks) == 1  # the training job goes on the queue once the submission commits


@pytest.mark.parametrize("uids, detail", [
    (["p1", "p2", "p3"], "over the budget of 2; the first over it is 'p3'"),
    (["p1", "x9"], "Entry 2: 'x9' is not in the pool 'pool'"),
])
def test_a_bad_selection_gets_a_400_naming_the_first_offender(task, api, uids, detail):
    response = api.post("/api/v1/models/selections", {"task": "select", "name": "bad", "uids": uids}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "bad_selection" and detail in response.json()["detail"]
    assert not MLModel.objects.exists()


def test_a_task_of_another_kind_takes_no_selection(sentiment_task, api):
    response = api.post("/api/v1/models/selections", {"task": "sentiment", "name": "x", "uids": ["a"]}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "wrong_submission"
