"""Bad input gets a 4xx with a message and changes nothing: unknown fields, wrong content
types, malformed or oversized bodies, bad ids."""

import json

from django.test import override_settings

from tasks.models import Round
from tests.api.conftest import client_for


def _close_round_one(task):
    Round.objects.filter(task=task, number=1).update(status=Round.Status.CLOSED)


def test_it_refuses_unknown_fields_naming_them(owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {"number": 7, "secret": "x"}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["field"] == "number"
    assert body["detail"] == "number: Unknown field. Allowed fields: contexts_from, end, loop_rule, start, target_models, without_model."
    assert set(body["errors"]) == {"number", "secret"}
    assert sentiment_task.rounds.count() == 1


def test_it_refuses_a_wrong_content_type(owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", "target_models=1", content_type="text/plain")

    assert response.status_code == 415
    assert response.json() == {"code": "unsupported_media_type", "detail": 'Unsupported media type "text/plain" in request.'}
    assert sentiment_task.rounds.count() == 1


def test_it_refuses_malformed_json(owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", '{"target_models": [', content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"
    assert sentiment_task.rounds.count() == 1


def test_it_refuses_a_json_array_where_an_object_is_expected(owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", "[1, 2]", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert sentiment_task.rounds.count() == 1


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_it_refuses_an_oversized_body(owner, sentiment_task):
    _close_round_one(sentiment_task)
    body = json.dumps({"target_models": [1] * 2000})

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", body, content_type="application/json")

    assert response.status_code == 413
    assert response.json()["code"] == "request_too_large"
    assert sentiment_task.rounds.count() == 1


def test_it_answers_json_404_for_bad_ids(sentiment_datasets):
    client = client_for(None)

    for url in ("/api/v1/datasets/abc", "/api/v1/datasets/999999", "/api/v1/datasets/-1/items", "/api/v1/tasks/sentiment/rounds/0"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json()["code"] == "not_found", url


def test_it_refuses_a_wrong_type_with_the_field_named(owner, sentiment_task):
    _close_round_one(sentiment_task)

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds", {"target_models": "all"}, format="json")

    assert response.status_code == 400
    assert response.json()["field"] == "target_models"
    assert sentiment_task.rounds.count() == 1
