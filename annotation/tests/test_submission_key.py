"""A submission key makes creating an example idempotent: a repeat returns the first example and
writes nothing, on the page, through the API and in the service (dynabench/idempotency.py)."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from annotation.tests.helpers import HTMX, token_of
from dynabench.errors import RuleError
from tests.api.conftest import client_for

TEXT = "Clean rooms, rude desk, great breakfast."
KEY = "0f8e2b7c4d1a4e5f9a0b1c2d3e4f5a6b"


def test_the_service_returns_the_first_example_for_a_repeated_key(annotator, sentiment_context):
    first = create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"}, submission_key=KEY)
    again = create_example(user=annotator, context=sentiment_context, input={"text": TEXT + " Really."}, target={"label": "negative"}, submission_key=KEY)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.pk == first.pk and again.target == {"label": "positive"}
    sentiment_context.refresh_from_db()
    assert Example.objects.count() == 1 and sentiment_context.times_used == 1


def test_keys_are_per_author_and_an_empty_key_never_matches(annotator, owner, sentiment_context):
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"}, submission_key=KEY)
    create_example(user=owner, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"}, submission_key=KEY)
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    assert Example.objects.count() == 4


def test_a_malformed_key_is_refused_naming_the_field(annotator, sentiment_context):
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"}, submission_key="no spaces allowed")
    assert (refused.value.code, refused.value.field) == ("bad_submission_key", "submission_key")
    assert not Example.objects.exists()


def test_the_create_form_posted_twice_makes_one_example(client, annotator, sentiment_task, sentiment_context):
    client.force_login(annotator)
    page = client.get("/tasks/sentiment/write/")
    key = page.context["form"]["submission_key"].value()
    assert key and f'name="submission_key" value="{key}"' in page.content.decode()
    data = {"token": token_of(page), "submission_key": key, "text": TEXT, "label": "positive"}
    first = client.post("/tasks/sentiment/write/submit", data, **HTMX)
    second = client.post("/tasks/sentiment/write/submit", data, **HTMX)
    assert first.status_code == second.status_code == 200
    example = Example.objects.get()
    assert f'data-example-id="{example.pk}"' in second.content.decode()
    # a fresh form has a fresh key
    assert client.get("/tasks/sentiment/write/").context["form"]["submission_key"].value() != key


def test_the_api_replays_a_repeated_idempotency_key(annotator, sentiment_task, sentiment_context):
    api = client_for(annotator)
    body = {"context": sentiment_context.pk, "input": {"text": TEXT}, "target": {"label": "positive"}}
    first = api.post("/api/v1/examples", body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api.post("/api/v1/examples", body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again["Idempotent-Replayed"] == "true"
    assert Example.objects.count() == 1
    bad = api.post("/api/v1/examples", body, format="json", HTTP_IDEMPOTENCY_KEY="x")
    assert bad.status_code == 400 and bad.json()["code"] == "bad_submission_key"
