"""Finding 8: a NUL character in an example's text is a 400 naming the field, on every database.

PostgreSQL cannot store NUL in ``text`` or ``jsonb``: old code passed it through the API's
``input`` object to the database, which failed with a 500 there (SQLite stored it).
Run this file with ``DATABASE_URL=postgres://...`` to check it on PostgreSQL too.
"""

import pytest

from annotation.models import Example
from tasks.loop.registry import get_predictor
from tests.api.conftest import client_for


def _label(model, text):
    return get_predictor(model).predict([{"text": text}])[0]["label"]


@pytest.mark.parametrize("text", ["nul\x00inside", "\x00"])
def test_the_api_refuses_nul_in_input_text(annotator, sentiment_task, sentiment_model, text):
    context = sentiment_task.current_round().contexts.order_by("pk").first()

    response = client_for(annotator).post(
        "/api/v1/examples",
        {"context": context.pk, "input": {"text": text}, "target": {"label": "positive"}},
        format="json",
    )

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "null_character" and response.json()["field"] == "text"
    assert not Example.objects.exists()


def test_the_api_refuses_nul_in_an_explanation(annotator, sentiment_task, sentiment_model):
    context = sentiment_task.current_round().contexts.order_by("pk").first()
    text = "The staff were friendly and the room was clean."

    response = client_for(annotator).post(
        "/api/v1/examples",
        {"context": context.pk, "input": {"text": text}, "target": {"label": _label(sentiment_model, text)},
         "metadata": {"example_explanation": "because\x00"}},
        format="json",
    )

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "null_character"
    assert not Example.objects.exists()
