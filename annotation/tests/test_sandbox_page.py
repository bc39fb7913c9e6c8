"""A visitor tries the model in the sandbox without logging in; nothing is saved."""

from annotation.models import Example
from annotation.tests.helpers import HTMX
from tasks.models import Context


def test_it_says_nothing_is_saved(client, sentiment_task, sentiment_model):
    response = client.get(f"/tasks/{sentiment_task.code}/sandbox/")
    assert response.status_code == 200
    assert "nothing you type here is saved" in response.content.decode()


def test_it_answers_a_visitor_and_saves_nothing(client, sentiment_task, sentiment_model):
    used = sum(Context.objects.values_list("times_used", flat=True))
    response = client.post(f"/tasks/{sentiment_task.code}/sandbox/", {"text": "Great little place.", "label": "negative"}, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "data-model-label" in html and 'data-prob="positive"' in html
    assert "would have fooled the model" in html or "gets this one right" in html
    assert not Example.objects.exists()
    assert sum(Context.objects.values_list("times_used", flat=True)) == used


def test_it_shows_errors_inline(client, sentiment_task, sentiment_model):
    response = client.post(f"/tasks/{sentiment_task.code}/sandbox/", {"text": ""}, **HTMX)
    assert response.status_code == 422
    assert 'data-error-for="text"' in response.content.decode()


def test_it_answers_qa_with_the_models_span(client, qa_task, qa_model):
    passage = "The Great Fire of London began on 2 September 1666 in a bakery."
    response = client.post(f"/tasks/{qa_task.code}/sandbox/", {"question": "When did it begin?", "passage": passage}, **HTMX)
    assert response.status_code == 200
    assert "data-model-answer" in response.content.decode()
