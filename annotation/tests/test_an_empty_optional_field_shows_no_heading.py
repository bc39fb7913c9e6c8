"""An optional field the annotator left empty (an image or audio task's note) shows nothing after the
answer: no heading over an empty quote. A filled one shows as before."""

import pytest

from annotation.tests.conftest import model_label
from annotation.tests.helpers import HTMX, token_of

NOTE = {"name": "note", "label": "What makes it tricky? (optional)", "max_length": 300, "required": False}


@pytest.fixture
def with_note(sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "input_fields": [*sentiment_task.config["input_fields"], NOTE]}
    sentiment_task.save(update_fields=["config"])
    return sentiment_task


def _submit(client, task, annotator, note):
    client.force_login(annotator)
    token = token_of(client.get(f"/tasks/{task.code}/write/"))
    text = "The staff were kind, the food forgettable."
    data = {"token": token, "text": text, "note": note, "label": model_label(task, text)}
    return client.post(f"/tasks/{task.code}/write/submit", data, **HTMX).content.decode()


def test_an_empty_note_shows_no_heading_after_the_answer(client, with_note, annotator):
    html = _submit(client, with_note, annotator, "")

    assert "The model got it right." in html and "What makes it tricky?" not in html


def test_a_filled_note_is_shown(client, with_note, annotator):
    html = _submit(client, with_note, annotator, "sarcasm")

    assert "What makes it tricky? (optional)</h3>" in html and ">sarcasm</div>" in html
