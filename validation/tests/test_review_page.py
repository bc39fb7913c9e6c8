"""The review queue page as a validator uses it: see an example, submit, get the next one."""

from annotation.models import Example
from validation.models import Validation
from validation.tests.conftest import make_example

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_a_validator_sees_the_example_with_both_answers(client, sentiment_task, annotator, validator):
    make_example(sentiment_task, annotator, label="positive", text="Loved every minute of it")
    client.force_login(validator)

    response = client.get("/tasks/sentiment/validate/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "Loved every minute of it" in html
    assert 'data-answer="annotator">positive' in html and 'data-answer="model">negative' in html
    assert 'name="expected_state" value="pending"' in html


def test_submitting_saves_the_verdict_and_loads_the_next_example(client, sentiment_task, annotator, validator):
    first = make_example(sentiment_task, annotator, text="first one")
    second = make_example(sentiment_task, annotator, text="second one")
    client.force_login(validator)
    client.get("/tasks/sentiment/validate/")

    response = client.post(f"/tasks/sentiment/validate/{first.pk}/", {"label": "correct", "expected_state": "pending"}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert f"Saved: correct on example {first.pk}" in html and "second one" in html
    assert "<html" not in html  # a fragment for HTMX
    assert Validation.objects.get(example=first).validator == validator
    assert Example.objects.get(pk=second.pk).leased_to == validator


def test_a_refused_verdict_shows_the_message_and_saves_nothing(client, sentiment_task, annotator, validator):
    example = make_example(sentiment_task, annotator)
    client.force_login(validator)
    client.get("/tasks/sentiment/validate/")  # the queue hands it out

    response = client.post(f"/tasks/sentiment/validate/{example.pk}/", {"label": "flagged"}, **HTMX)

    assert response.status_code == 400
    assert "Say why you flag this example" in response.content.decode()
    assert not Validation.objects.exists()


def test_skipping_moves_on(client, sentiment_task, annotator, validator):
    first = make_example(sentiment_task, annotator, text="first one")
    make_example(sentiment_task, annotator, text="second one")
    client.force_login(validator)
    client.get("/tasks/sentiment/validate/")

    response = client.post(f"/tasks/sentiment/validate/{first.pk}/skip/", **HTMX)

    assert "second one" in response.content.decode()
    assert "second one" in client.get("/tasks/sentiment/validate/").content.decode()


def test_people_without_the_role_are_told_so(client, sentiment_task, outsider):
    client.force_login(outsider)

    response = client.get("/tasks/sentiment/validate/")

    assert response.status_code == 403 and "validator role" in response.content.decode()
