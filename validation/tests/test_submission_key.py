"""A repeated validation submission (same key) returns the first validation instead of failing as
"already validated" or counting twice (dynabench/idempotency.py)."""

from tests.api.conftest import client_for
from validation.models import Validation
from validation.services import record_validation
from validation.tests.conftest import leased

KEY = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"


def test_the_service_returns_the_first_validation_for_a_repeated_key(fooling_example, validator):
    first = record_validation(example=leased(fooling_example, validator), validator=validator, label="correct", submission_key=KEY)
    again = record_validation(example=leased(fooling_example, validator), validator=validator, label="incorrect", submission_key=KEY)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.pk == first.pk and again.label == "correct"
    fooling_example.refresh_from_db()
    assert (Validation.objects.count(), fooling_example.validation_count) == (1, 1)


def test_the_review_form_posted_twice_saves_once_and_shows_the_next_example(client, sentiment_task, annotator, validator, fooling_example):
    client.force_login(validator)
    page = client.get("/tasks/sentiment/validate/")
    key = page.context["submission_key"]
    assert f'name="submission_key" value="{key}"' in page.content.decode()
    data = {"label": "correct", "expected_state": "pending", "round": 1, "submission_key": key}
    first = client.post(f"/tasks/sentiment/validate/{fooling_example.pk}/", data, HTTP_HX_REQUEST="true")
    second = client.post(f"/tasks/sentiment/validate/{fooling_example.pk}/", data, HTTP_HX_REQUEST="true")
    assert first.status_code == second.status_code == 200
    assert f"Saved: correct on example {fooling_example.pk}." in second.content.decode()
    assert Validation.objects.count() == 1


def test_the_api_replays_a_repeated_idempotency_key(fooling_example, validator):
    api = client_for(validator)
    leased(fooling_example, validator)
    body = {"example": fooling_example.pk, "label": "correct"}
    first = api.post("/api/v1/validations", body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    again = api.post("/api/v1/validations", body, format="json", HTTP_IDEMPOTENCY_KEY=KEY)
    assert (first.status_code, again.status_code) == (201, 200), again.json()
    assert again.json()["id"] == first.json()["id"] and again["Idempotent-Replayed"] == "true"
    assert Validation.objects.count() == 1
