"""After submitting: explain, retract, flag and try again, each in place (HTMX); only the author may."""

import pytest

from annotation.services import create_example
from annotation.tests.conftest import model_label, other_label
from annotation.tests.helpers import HTMX

TEXT = "Not bad at all, for once."


@pytest.fixture
def fooling(annotator, sentiment_task, sentiment_context):
    label = other_label(sentiment_task, model_label(sentiment_task, TEXT))
    return create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label})


@pytest.fixture
def author(client, annotator):
    client.force_login(annotator)
    return client


def test_it_saves_explanations(author, fooling):
    response = author.post(f"/my/examples/{fooling.pk}/explain", {"example_explanation": "double negation", "model_explanation": "saw 'bad'"}, **HTMX)
    assert response.status_code == 200
    assert "Explanation saved." in response.content.decode()
    fooling.refresh_from_db()
    assert fooling.metadata == {"example_explanation": "double negation", "model_explanation": "saw 'bad'"}


def test_it_asks_for_an_explanation_when_empty(author, fooling):
    response = author.post(f"/my/examples/{fooling.pk}/explain", {"example_explanation": ""}, **HTMX)
    assert response.status_code == 422
    assert "Write an explanation first." in response.content.decode()


def test_it_retracts(author, fooling):
    response = author.post(f"/my/examples/{fooling.pk}/retract", **HTMX)
    assert response.status_code == 200
    assert "data-retracted" in response.content.decode()
    fooling.refresh_from_db()
    assert fooling.retracted is True


def test_it_flags_with_a_reason_and_asks_for_one(author, fooling):
    missing = author.post(f"/my/examples/{fooling.pk}/flag", {"reason": ""}, **HTMX)
    assert missing.status_code == 422 and "Say why you flag" in missing.content.decode()
    response = author.post(f"/my/examples/{fooling.pk}/flag", {"reason": "typo in my sentence"}, **HTMX)
    assert response.status_code == 200 and "Flagged: typo in my sentence" in response.content.decode()
    fooling.refresh_from_db()
    assert fooling.flagged is True


def test_it_tries_again_keeping_the_input(author, fooling):
    response = author.get(f"/my/examples/{fooling.pk}/again", **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert f"{TEXT}</textarea>" in html
    assert f'value="{fooling.target["label"]}" id="id_label_{fooling.round.task.labels.index(fooling.target["label"])}" checked' in html


@pytest.mark.parametrize("action", ["retract", "flag", "explain"])
def test_it_hides_other_peoples_examples(client, owner, fooling, action):
    client.force_login(owner)
    response = client.post(f"/my/examples/{fooling.pk}/{action}", {"reason": "x", "example_explanation": "x"}, **HTMX)
    assert response.status_code == 404
    fooling.refresh_from_db()
    assert (fooling.retracted, fooling.flagged, fooling.metadata) == (False, False, {})
