"""Submitting on the create page (HTMX): the model's answer and the outcome at once, or inline errors."""

import pytest

from annotation.models import Example
from annotation.tests.conftest import model_label, other_label
from annotation.tests.helpers import HTMX, token_of

TEXT = "The staff were kind, the food forgettable."


@pytest.fixture
def page(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    return client.get(f"/tasks/{sentiment_task.code}/write/")


def submit(client, task, data):
    return client.post(f"/tasks/{task.code}/write/submit", data, **HTMX)


def test_it_shows_you_fooled_the_model_with_the_label_probabilities(client, sentiment_task, page):
    label = other_label(sentiment_task, model_label(sentiment_task, TEXT))
    response = submit(client, sentiment_task, {"token": token_of(page), "text": TEXT, "label": label})
    assert response.status_code == 200
    html = response.content.decode()
    assert "You fooled the model!" in html
    for name in sentiment_task.labels:
        assert f'data-prob="{name}"' in html
    assert "Why the model got it wrong" in html
    example = Example.objects.get()
    assert f'data-example-id="{example.pk}"' in html
    assert example.model_wrong is True and example.time_spent is not None


def test_it_says_the_model_got_it_right(client, sentiment_task, page):
    label = model_label(sentiment_task, TEXT)
    html = submit(client, sentiment_task, {"token": token_of(page), "text": TEXT, "label": label}).content.decode()
    assert "The model got it right." in html
    assert "Why the model got it wrong" not in html


def test_it_ignores_a_posted_model_wrong_and_model_output(client, sentiment_task, page):
    label = model_label(sentiment_task, TEXT)
    response = submit(client, sentiment_task, {
        "token": token_of(page), "text": TEXT, "label": label,
        "model_wrong": "true", "model_output": '{"label": "x"}', "author": "999",
    })
    assert response.status_code == 200
    example = Example.objects.get()
    assert example.model_wrong is False and example.model_output["label"] == label


def test_it_shows_what_to_fix_inline_with_422_and_keeps_the_input(client, sentiment_task, page):
    response = submit(client, sentiment_task, {"token": token_of(page), "text": "Good enough", "label": "mixed"})
    assert response.status_code == 422
    html = response.content.decode()
    assert 'data-error-for="label"' in html and "not a label of this task" in html
    assert "Good enough</textarea>" in html
    assert not Example.objects.exists()


def test_it_shows_a_too_long_text_inline(client, sentiment_task, page):
    response = submit(client, sentiment_task, {"token": token_of(page), "text": "x" * 600, "label": "positive"})
    assert response.status_code == 422
    assert 'data-error-for="text"' in response.content.decode()


def test_it_refuses_over_the_rate_limit_inline_with_429(client, sentiment_task, page, settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1
    assert submit(client, sentiment_task, {"token": token_of(page), "text": "one", "label": "positive"}).status_code == 200
    response = submit(client, sentiment_task, {"token": token_of(page), "text": "two", "label": "positive"})
    assert response.status_code == 429
    assert "Too many submissions" in response.content.decode()
    assert Example.objects.count() == 1


def test_it_keeps_the_input_on_a_new_context_when_the_token_is_forged(client, sentiment_task, page):
    response = submit(client, sentiment_task, {"token": "forged", "text": "kept text", "label": "positive"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "tampered" in html and "kept text</textarea>" in html
    assert not Example.objects.exists()


def test_it_refuses_a_token_of_another_tasks_context(client, nli_task, sentiment_task, page, nli_model):
    response = client.post(f"/tasks/{nli_task.code}/write/submit", {"token": token_of(page), "hypothesis": "h", "label": "neutral"}, **HTMX)
    assert response.status_code == 422
    assert not Example.objects.exists()


def test_it_shows_the_models_span_for_qa(client, annotator, qa_task, qa_context):
    client.force_login(annotator)
    page = client.get(f"/tasks/{qa_task.code}/write/")
    passage = qa_task.current_round().contexts.get(uid=page.content.decode().split('data-context="')[1].split('"')[0]).data["passage"]
    response = submit(client, qa_task, {"token": token_of(page), "question": "What is it?", "answer_text": passage[4:15], "answer_start": 4})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-model-answer' in html and '<mark class="' in html and "word F1" in html


def test_it_asks_to_select_an_answer_for_qa(client, annotator, qa_task, qa_context):
    client.force_login(annotator)
    page = client.get(f"/tasks/{qa_task.code}/write/")
    response = submit(client, qa_task, {"token": token_of(page), "question": "What?", "answer_text": "", "answer_start": ""})
    assert response.status_code == 422
    assert 'data-error-for="answer"' in response.content.decode()


def test_it_works_without_javascript_as_a_whole_page(client, sentiment_task, page):
    response = client.post(f"/tasks/{sentiment_task.code}/write/submit", {"token": token_of(page), "text": TEXT, "label": "neutral"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html and ("You fooled the model!" in html or "The model got it right." in html)
    assert Example.objects.count() == 1
