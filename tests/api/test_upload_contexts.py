"""Owners upload contexts to a round through the API; the foundation importer reads the file."""

import io

from tasks.models import Context
from tests.api.conftest import client_for


def _jsonl(*lines):
    return io.BytesIO("\n".join(lines).encode())


def test_it_imports_a_jsonl_file_with_a_field_map(owner, sentiment_task):
    upload = _jsonl('{"id": "y1", "sentence": "The pasta was fine."}', '{"id": "y2", "sentence": "Parking is free after six."}')
    upload.name = "prompts.jsonl"

    response = client_for(owner).post(
        "/api/v1/tasks/sentiment/rounds/1/contexts", {"file": upload, "map": ["prompt=sentence"], "uid_field": "id"}, format="multipart"
    )

    assert response.status_code == 201, response.json()
    assert response.json()["added"] == 2
    assert Context.objects.get(round__task=sentiment_task, uid="y2").data == {"prompt": "Parking is free after six."}


def test_it_refuses_a_bad_row_with_its_line_number_and_keeps_nothing(owner, sentiment_task):
    upload = _jsonl('{"uid": "a", "prompt": "Fine."}', '{"uid": "b", "prompt": ')
    upload.name = "prompts.jsonl"
    before = Context.objects.count()

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/contexts", {"file": upload}, format="multipart")

    assert response.status_code == 400
    assert response.json()["code"] == "import_row_invalid"
    assert response.json()["detail"].startswith("line 2: ")
    assert Context.objects.count() == before


def test_it_refuses_json_bodies(owner, sentiment_task):
    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/contexts", {"contexts": []}, format="json")

    assert response.status_code == 415


def test_it_refuses_an_unknown_form_field(owner, sentiment_task):
    upload = _jsonl('{"uid": "a", "prompt": "Fine."}')
    upload.name = "prompts.jsonl"

    response = client_for(owner).post("/api/v1/tasks/sentiment/rounds/1/contexts", {"file": upload, "round": "2"}, format="multipart")

    assert response.status_code == 400
    assert response.json()["field"] == "round"
