"""Issue 28 (uploads): refused uploads were not counted against any limit and the HTML submit page had
no throttle, so a few requests could keep every web worker busy. Now every submission attempt, accepted
or refused, counts against one hourly throttle per user (``MODEL_UPLOAD_ATTEMPTS_PER_HOUR``) shared by
the submit page and the API; past it both answer 429 ``upload_rate`` before looking at the upload."""

import io

from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.models import MLModel
from tests.api.conftest import client_for


def page_upload(client, task, data: bytes):
    return client.post(f"/tasks/{task.code}/submit/", {
        "kind": "archive", "name": "attempt", "upload": SimpleUploadedFile("model.zip", data, content_type="application/zip"),
    })


def api_upload(user, data: bytes):
    upload = io.BytesIO(data)
    upload.name = "model.zip"
    return client_for(user).post("/api/v1/models", {"task": "sentiment", "name": "attempt", "archive": upload}, format="multipart")


def test_refused_and_accepted_uploads_count_alike_on_the_page_and_the_api(
    client, researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip, settings,
):
    settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR = 3
    client.force_login(researcher)

    answers = [
        page_upload(client, sentiment_task, b"not a zip").status_code,  # refused: counts
        api_upload(researcher, b"not a zip either").status_code,  # refused on the other surface: counts
        api_upload(researcher, tiny_sentiment_zip).status_code,  # taken: counts
        api_upload(researcher, tiny_sentiment_zip).status_code,
        page_upload(client, sentiment_task, tiny_sentiment_zip).status_code,
    ]

    assert answers == [400, 400, 202, 429, 429]
    assert api_upload(researcher, tiny_sentiment_zip).json()["code"] == "upload_rate"
    page = page_upload(client, sentiment_task, tiny_sentiment_zip).content.decode()
    assert "Too many submissions: at most 3 an hour, refused ones included" in page
    assert MLModel.objects.count() == 1


def test_the_throttle_is_per_user(client, researcher, owner, sentiment_task, sentiment_dataset, settings):
    settings.MODEL_UPLOAD_ATTEMPTS_PER_HOUR = 1
    assert api_upload(researcher, b"junk").status_code == 400
    assert api_upload(researcher, b"junk").status_code == 429
    assert api_upload(owner, b"junk").status_code == 400  # another user's attempts are counted apart
