"""An endpoint model in the loop: annotators write examples against it through the create page; each
example records which endpoint and parameters answered, the raw answer, its latency and token counts;
the server decides model_wrong from the label parsed from the answer's text."""

import pytest

from annotation.models import Example
from annotation.tests.helpers import HTMX, token_of
from tasks.loop.endpoints.budget import round_usage
from tasks.kinds.base import first_label_in

TEXT = "the food was great and the staff were friendly"


@pytest.fixture
def endpoint_in_loop(sentiment_task, make_endpoint_model):
    model = make_endpoint_model(sentiment_task, name="gpt-endpoint")
    sentiment_task.current_round().target_models.add(model)
    return model


def _write(client, annotator, task, label="positive"):
    client.force_login(annotator)
    page = client.get(f"/tasks/{task.code}/write/")
    assert page.status_code == 200
    return client.post(f"/tasks/{task.code}/write/submit", {"token": token_of(page), "text": TEXT, "label": label}, **HTMX)


def test_an_example_records_the_endpoint_answer(client, annotator, sentiment_task, endpoint_in_loop, endpoint_server):
    response = _write(client, annotator, sentiment_task)

    assert response.status_code == 200
    example = Example.objects.get()
    assert example.model == endpoint_in_loop
    call = example.model_output["endpoint"]
    assert call["model"] == "tiny-gpt2" and call["params"] == {"temperature": 0.0, "max_tokens": 8, "seed": 1}
    assert call["latency_ms"] > 0 and call["prompt_tokens"] > 0 and call["completion_tokens"] >= 1
    assert example.model_output["label"] == first_label_in(sentiment_task.config, call["raw"]["text"])
    assert example.model_wrong is (example.model_output["label"] != "positive")
    assert "data-endpoint-answer" in response.content.decode()
    assert round_usage(example.round)["calls"] == 1


def test_no_target_reaches_the_endpoint(client, annotator, sentiment_task, endpoint_in_loop, endpoint_server):
    _write(client, annotator, sentiment_task, label="neutral")
    [request] = endpoint_server.requests
    user_message = request["body"]["messages"][-1]["content"]
    assert user_message == f"text: {TEXT}"
