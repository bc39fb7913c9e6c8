"""Finding 4 (part): submitting a model, predictions or a selection needs the researcher role.

Old code: ``check_can_submit`` only asked for a login, so any fresh account (sign-up gives the
annotator role) could upload models through the API, the page and the Python client. Now an
account without the role gets a 403 naming the role and how to get it, and nothing is stored;
the task's owners and researchers still submit.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from dynabench_client import DynabenchClient, PermissionDenied
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (scoring dev + hidden test, 3 items each)
from tasks.models import MLModel


def _predictions(datasets) -> bytes:
    rows = [{"dataset": d.name, "uid": item.uid, "label": "positive"} for d in datasets.values() for item in d.items.all()]
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def test_the_api_refuses_an_annotator_and_stores_nothing(annotator, sentiment_task, sentiment_datasets, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    upload = SimpleUploadedFile("p.jsonl", _predictions(sentiment_datasets))

    response = client_for(annotator).post("/api/v1/models/predictions", {"task": "sentiment", "name": "guess", "predictions": upload})

    assert response.status_code == 403
    assert response.json()["code"] == "not_researcher"
    assert "researcher role" in response.json()["detail"]
    assert not MLModel.objects.exists()
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_the_page_explains_the_role_and_refuses_a_post(client, annotator, sentiment_task, sentiment_datasets):
    client.force_login(annotator)

    page = client.get("/tasks/sentiment/submit/")
    posted = client.post("/tasks/sentiment/submit/", {
        "kind": "predictions", "name": "guess", "upload": SimpleUploadedFile("p.jsonl", _predictions(sentiment_datasets)),
    })

    assert page.status_code == 403 and "needs the researcher role" in page.content.decode()
    assert 'type="file"' not in page.content.decode()
    assert posted.status_code == 403
    assert not MLModel.objects.exists()


def test_the_client_raises_permission_denied(live_server, annotator, sentiment_task, sentiment_datasets, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_predictions(sentiment_datasets))
    client = DynabenchClient.login("annie", "pw-annie", base_url=live_server.url)

    assert client.submission_allowance()["researcher"] is False
    with pytest.raises(PermissionDenied) as error:
        client.submit_predictions(path, task="sentiment", name="guess")

    assert error.value.code == "not_researcher"
    assert not MLModel.objects.exists()


@pytest.mark.parametrize("who", ["researcher", "owner"])
def test_researchers_and_the_tasks_owners_submit(who, request, sentiment_task, sentiment_datasets, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    user = request.getfixturevalue(who)
    upload = SimpleUploadedFile("p.jsonl", _predictions(sentiment_datasets))

    response = client_for(user).post("/api/v1/models/predictions", {"task": "sentiment", "name": "guess", "predictions": upload})

    assert response.status_code == 201, response.content
    assert MLModel.objects.get().owner == user
