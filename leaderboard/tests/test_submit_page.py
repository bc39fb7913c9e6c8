"""The submission page: upload through the form, errors shown inline next to the upload."""

from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.tests.conftest import SENTIMENT_ITEMS, predictions_jsonl
from tasks.models import MLModel
from tests.upload_support import unpack_now


def test_an_archive_uploaded_through_the_page_lands_on_its_model_page(client, researcher, sentiment_task, sentiment_dataset, tiny_sentiment_zip):
    client.force_login(researcher)
    assert client.get(f"/tasks/{sentiment_task.code}/submit/").status_code == 200
    response = client.post(f"/tasks/{sentiment_task.code}/submit/", {
        "kind": "archive", "name": "my model", "description": "card", "published": "on",
        "upload": SimpleUploadedFile("model.zip", tiny_sentiment_zip, content_type="application/zip"),
    })
    model = MLModel.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/models/{model.pk}/"
    assert (model.owner, model.published, model.status) == (researcher, True, "unpacking")
    assert "Unpacking the archive…" in client.get(response["Location"]).content.decode()
    assert unpack_now(model).status == "queued"


def test_a_bad_upload_is_shown_inline_and_nothing_is_stored(client, researcher, sentiment_task, sentiment_dataset):
    client.force_login(researcher)
    response = client.post(f"/tasks/{sentiment_task.code}/submit/", {
        "kind": "archive", "name": "oops", "upload": SimpleUploadedFile("model.zip", b"not a zip"),
    })
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="error-upload"' in html and "not a zip or tar(.gz) archive" in html
    assert MLModel.objects.count() == 0


def test_a_predictions_file_lists_missing_items_inline(client, researcher, sentiment_task, sentiment_dataset):
    client.force_login(researcher)
    rows = [{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS[:5]]
    response = client.post(f"/tasks/{sentiment_task.code}/submit/", {
        "kind": "predictions", "name": "partial", "upload": SimpleUploadedFile("p.jsonl", predictions_jsonl(rows)),
    })
    assert response.status_code == 400
    assert "no prediction for 1 of 6 items of sentiment-r1-dev: s6" in response.content.decode()


def test_the_page_needs_a_login(client, sentiment_task):
    response = client.get(f"/tasks/{sentiment_task.code}/submit/")
    assert response.status_code == 302 and "/login" in response["Location"]
