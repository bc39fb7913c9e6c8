"""When the endpoint in the loop does not answer, the example is refused with a clear message and the
annotator's text stays in the form (nothing saved, nothing lost); once its breaker is open the create
page says so before anyone writes; a round's spent budget refuses further examples."""

import pytest

from annotation.models import Example
from annotation.tests.helpers import HTMX, token_of
from tasks.loop.endpoints.breaker import breaker_state

TEXT = "the service was slow and the room was dirty"


@pytest.fixture
def endpoint_in_loop(sentiment_task, make_endpoint_model, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 1
    model = make_endpoint_model(sentiment_task, name="gpt-endpoint", max_retries=0)
    sentiment_task.current_round().target_models.add(model)
    return model


def test_a_failing_endpoint_refuses_with_503_and_keeps_the_text(client, annotator, sentiment_task, endpoint_in_loop, endpoint_server):
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")
    endpoint_server.fail_next = [500]

    response = client.post(f"/tasks/{sentiment_task.code}/write/submit", {"token": token_of(page), "text": TEXT, "label": "negative"}, **HTMX)

    assert response.status_code == 503
    html = response.content.decode()
    assert "Nothing was saved; your text stays in the form" in html
    assert f"{TEXT}</textarea>" in html
    assert not Example.objects.exists()
    assert breaker_state(endpoint_in_loop)["open"]

    again = client.get(f"/tasks/{sentiment_task.code}/write/")
    assert again.status_code == 200
    assert "is not answering right now" in again.content.decode()


def test_a_spent_budget_refuses_the_next_example(client, annotator, sentiment_task, endpoint_in_loop, endpoint_server):
    round = sentiment_task.current_round()
    round.endpoint_call_budget = 1
    round.save()
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")
    first = client.post(f"/tasks/{sentiment_task.code}/write/submit", {"token": token_of(page), "text": TEXT, "label": "negative"}, **HTMX)
    assert first.status_code == 200
    page = client.get(f"/tasks/{sentiment_task.code}/write/")

    second = client.post(f"/tasks/{sentiment_task.code}/write/submit", {"token": token_of(page), "text": TEXT + " again", "label": "negative"}, **HTMX)

    assert second.status_code == 409 and "used its budget" in second.content.decode()
    assert Example.objects.count() == 1 and len(endpoint_server.requests) == 1
