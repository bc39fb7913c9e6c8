"""The create page posts to the async ``submit_waiting`` view when a model behind an endpoint may
answer in the round's loop (its wait then holds no thread), and to the plain ``submit`` view when
only models in the process answer; both store the same example."""

import re

from annotation.models import Example
from annotation.tests.helpers import HTMX, token_of

TEXT = "the food was great and the staff were friendly"


def _form_action(page) -> str:
    return re.search(r'hx-post="([^"]+)"', page.content.decode()).group(1)


def test_an_endpoint_in_the_loop_gets_the_async_view(client, annotator, sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, name="gpt-endpoint")
    sentiment_task.current_round().target_models.set([model])
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")

    action = _form_action(page)
    response = client.post(action, {"token": token_of(page), "text": TEXT, "label": "positive"}, **HTMX)

    assert action == f"/tasks/{sentiment_task.code}/write/submit-waiting"
    assert response.status_code == 200 and "data-endpoint-answer" in response.content.decode()
    example = Example.objects.get()
    assert example.model == model and example.model_output["endpoint"]["completion_tokens"] >= 1


def test_a_model_in_the_process_gets_the_plain_view(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")

    action = _form_action(page)
    response = client.post(action, {"token": token_of(page), "text": TEXT, "label": "positive"}, **HTMX)

    assert action == f"/tasks/{sentiment_task.code}/write/submit"
    assert response.status_code == 200 and Example.objects.count() == 1
