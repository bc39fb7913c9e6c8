"""When the endpoint in the loop refuses its settings (an HTTP 400: a wrong model name), the annotator is
told that the task's model is misconfigured and its owners were told, not to submit again in 30 s; nothing
is saved, the text stays in the form, and the endpoint is not taken out of rotation."""

import pytest

from annotation.models import Example
from annotation.tests.helpers import HTMX, token_of
from tasks.loop.endpoints.breaker import breaker_state

TEXT = "the service was slow and the room was dirty"


@pytest.fixture
def pinned_endpoint_in_loop(sentiment_task, make_endpoint_model, endpoint_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 1
    model = make_endpoint_model(sentiment_task, name="gpt-endpoint", model_name="tiny", max_retries=2)
    sentiment_task.current_round().target_models.add(model)
    endpoint_server.pinned = True
    return model


def test_the_annotator_reads_that_the_model_is_misconfigured(client, annotator, sentiment_task, pinned_endpoint_in_loop, endpoint_server):
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")

    response = client.post(f"/tasks/{sentiment_task.code}/write/submit", {"token": token_of(page), "text": TEXT, "label": "negative"}, **HTMX)

    assert response.status_code == 502
    html = response.content.decode()
    assert "is misconfigured, so it cannot answer; its owners were told" in html
    assert "requested &#x27;tiny&#x27;" in html  # the server's reason, escaped
    assert "submit it again" not in html and f"{TEXT}</textarea>" in html
    assert not Example.objects.exists() and len(endpoint_server.requests) == 1
    assert not breaker_state(pinned_endpoint_in_loop)["open"]
