"""A hidden dataset's labels never leave the server, through any endpoint, for anyone.

The test walks every GET operation of the OpenAPI schema as every kind of user, with the
path parameters pointing at the hidden objects, and looks for a marker that only the
hidden labels carry.
"""

import json

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotation.models import Example, ValidationState
from tasks.models import Dataset, DatasetItem, Round
from tests.api.conftest import client_for

MARKER = "HIDDEN-LABEL-7f3a"


@pytest.fixture
def hidden_data(sentiment_task, annotator, sentiment_model):
    """Round 1 closed; its test split is a hidden dataset holding items and a verified example."""
    round1 = sentiment_task.rounds.get(number=1)
    round1.status = Round.Status.CLOSED
    round1.save()
    dataset = Dataset.objects.create(task=sentiment_task, round=round1, name="sent-r1-test", access="hidden", split="test")
    DatasetItem.objects.create(
        dataset=dataset, uid="hidden-item", input={"text": "a hidden test sentence"},
        target={"label": "negative", "marker": MARKER}, metadata={"votes": MARKER},
    )
    example = Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator, input={"text": "my hidden example"},
        target={"label": "negative", "marker": MARKER}, model=sentiment_model,
        model_output={"label": "positive", "marker": MARKER}, model_wrong=True, metadata={"example_explanation": MARKER},
        validation_state=ValidationState.VERIFIED_CORRECT, split="test",
    )
    return {"dataset": dataset, "example": example, "round": round1, "model": sentiment_model}


def _get_paths():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [path for path, ops in schema["paths"].items() if "get" in ops]


def _fill(path, data):
    ids = {"/api/v1/datasets/": data["dataset"].pk, "/api/v1/examples/": data["example"].pk, "/api/v1/models/": data["model"].pk}
    for prefix, pk in ids.items():
        if path.startswith(prefix):
            path = path.replace("{id}", str(pk))
    return path.replace("{task_code}", "sentiment").replace("{round_number}", "1")


@pytest.mark.parametrize("who", ["anonymous", "annotator", "owner", "admin_user"])
def test_no_get_endpoint_returns_a_hidden_label(who, hidden_data, request):
    client = APIClient() if who == "anonymous" else client_for(request.getfixturevalue(who))
    reached_hidden_inputs = False

    for path in _get_paths():
        url = _fill(path, hidden_data)
        response = client.get(url, {"page_size": 1000})
        body = json.dumps(response.json()) if response.content else ""
        assert MARKER not in body, f"{url} leaked a hidden label to {who}"
        reached_hidden_inputs |= "a hidden test sentence" in body

    assert reached_hidden_inputs, "the walk never reached the hidden items' inputs"


def test_the_hidden_items_come_with_their_inputs_but_no_target(hidden_data):
    response = APIClient().get(f"/api/v1/datasets/{hidden_data['dataset'].pk}/items")

    assert response.json()["results"] == [
        {"uid": "hidden-item", "input": {"text": "a hidden test sentence"}, "target": None, "tag": "", "metadata": None}
    ]
