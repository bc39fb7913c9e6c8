"""The writing assistant: *Suggest* fills the create form with the assistant's example (a real
OpenAI-compatible server answers); the annotator edits it and submits; the example records that it was
assisted, the suggestion and the edit distance. Discarding it writes an unaided example."""

import json
import re

import pytest

from annotation.models import Example, RoundAssistant
from annotation.tests.helpers import HTMX, token_of

SUGGESTED = {"hypothesis": "The man is playing music outside", "label": "entailment"}


@pytest.fixture
def assistant(nli_task, nli_model, make_endpoint_model):
    model = make_endpoint_model(nli_task, name="assistant")
    return RoundAssistant.objects.create(round=nli_task.current_round(), model=model)


def _suggestion_of(response) -> str:
    return re.search(r'name="suggestion" value="([^"]+)"', response.content.decode()).group(1)


def test_a_suggestion_fills_the_form_and_the_edited_example_records_it(client, annotator, nli_task, assistant, endpoint_server):
    client.force_login(annotator)
    page = client.get(f"/tasks/{nli_task.code}/write/")
    assert "data-suggest" in page.content.decode()
    endpoint_server.scripted = [f"Here you are: {json.dumps(SUGGESTED)}"]

    suggested = client.post(f"/tasks/{nli_task.code}/write/suggest", {"token": token_of(page)}, **HTMX)

    assert suggested.status_code == 200
    html = suggested.content.decode()
    assert "The man is playing music outside" in html and 'value="entailment"' in html and "checked" in html
    assert "data-discard-suggestion" in html
    submitted = client.post(f"/tasks/{nli_task.code}/write/submit", {
        "token": token_of(suggested), "suggestion": _suggestion_of(suggested),
        "hypothesis": "The man is playing loud music outside", "label": "entailment",
    }, **HTMX)
    assert submitted.status_code == 200
    example = Example.objects.get()
    assert example.origin == "assisted"
    assert example.suggestion["input"]["hypothesis"] == SUGGESTED["hypothesis"]
    assert example.suggestion["form"] == {"label": "entailment"}
    assert example.suggestion_distance == len("loud ")


def test_a_discarded_suggestion_leaves_an_unaided_example(client, annotator, nli_task, assistant, endpoint_server):
    client.force_login(annotator)
    page = client.get(f"/tasks/{nli_task.code}/write/")
    endpoint_server.scripted = [json.dumps(SUGGESTED)]
    suggested = client.post(f"/tasks/{nli_task.code}/write/suggest", {"token": token_of(page)}, **HTMX)

    discarded = client.post(f"/tasks/{nli_task.code}/write/suggest",
                            {"token": token_of(suggested), "suggestion": _suggestion_of(suggested), "discard": "1"}, **HTMX)

    assert discarded.status_code == 200 and 'name="suggestion"' in discarded.content.decode()
    assert 'name="suggestion" value=' not in discarded.content.decode()
    client.post(f"/tasks/{nli_task.code}/write/submit",
                {"token": token_of(discarded), "hypothesis": "Nobody is outside", "label": "contradiction"}, **HTMX)
    example = Example.objects.get()
    assert (example.origin, example.suggestion, example.suggestion_distance) == ("written", None, None)


def test_a_suggestion_for_another_context_is_refused(client, annotator, nli_task, assistant, endpoint_server):
    client.force_login(annotator)
    page = client.get(f"/tasks/{nli_task.code}/write/")
    endpoint_server.scripted = [json.dumps(SUGGESTED)]
    suggested = client.post(f"/tasks/{nli_task.code}/write/suggest", {"token": token_of(page)}, **HTMX)
    other_token = token_of(client.get(f"/tasks/{nli_task.code}/write/context", {"exclude": _context_of(page)}, **HTMX))

    response = client.post(f"/tasks/{nli_task.code}/write/submit", {
        "token": other_token, "suggestion": _suggestion_of(suggested), "hypothesis": "A man plays", "label": "entailment",
    }, **HTMX)

    assert response.status_code == 422
    assert "another context" in response.content.decode()
    assert not Example.objects.exists()


def _context_of(page) -> str:
    return re.search(r'exclude=(\d+)', page.content.decode()).group(1)
