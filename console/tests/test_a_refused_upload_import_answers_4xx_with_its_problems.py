"""An upload import the file's rows refuse answers a 4xx with the line-numbered problems, on the
console page and in the API; one handed to the RQ job answers 202, and once a real worker has run
it, its status (page and API) says failed with the problems. A good import still redirects (page)
or answers 200 (API)."""

import io

import django_rq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rq import SimpleWorker

from tasks.models import Context, Upload
from tests.api.conftest import client_for

BROKEN = b"id,sentence\na1,First.\na2,Second,extra\na3,Third.\n"  # line 3 has a field too many
MAPPING = {"field_prompt": "sentence", "uid": "id"}


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _page_upload(client, content: bytes) -> Upload:
    client.post("/tasks/sentiment/console/uploads/", {"target": "contexts", "round": 1, "file": SimpleUploadedFile("c.csv", content)})
    return Upload.objects.latest("pk")


def _api_upload(client, content: bytes) -> int:
    file = io.BytesIO(content)
    file.name = "c.csv"
    created = client.post("/api/v1/tasks/sentiment/uploads", {"file": file, "target": "contexts", "round": 1}, format="multipart")
    assert created.status_code == 201
    return created.json()["id"]


def test_the_page_answers_400_with_the_numbered_line_and_keeps_the_mapping(client, owner, sentiment_task):
    client.force_login(owner)
    upload = _page_upload(client, BROKEN)

    response = client.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", MAPPING)

    page = response.content.decode()
    assert response.status_code == 400
    assert 'data-status="failed"' in page and "line 3: expected 2 fields as in the header, found 3" in page
    assert "nothing was imported" in page and '<option value="sentence" selected>' in page
    assert not Context.objects.filter(uid="a1").exists()
    good = _page_upload(client, b"id,sentence\na1,First.\n")
    assert client.post(f"/tasks/sentiment/console/uploads/{good.pk}/", MAPPING).status_code == 302


def test_the_api_answers_400_with_the_numbered_line(owner, sentiment_task):
    client = client_for(owner)
    upload = _api_upload(client, BROKEN)

    refused = client.post(f"/api/v1/tasks/sentiment/uploads/{upload}/import", {"fields": {"prompt": "sentence"}, "uid": "id"}, format="json")

    assert refused.status_code == 400
    assert refused.json()["status"] == "failed" and refused.json()["errors"] == [{"line": 3, "message": "expected 2 fields as in the header, found 3"}]
    good = _api_upload(client, b"id,sentence\na1,First.\n")
    done = client.post(f"/api/v1/tasks/sentiment/uploads/{good}/import", {"fields": {"prompt": "sentence"}, "uid": "id"}, format="json")
    assert done.status_code == 200 and done.json()["status"] == "done"


def test_a_queued_import_answers_202_and_its_status_shows_the_failure_after_the_worker(
    client, owner, sentiment_task, settings, default_queue, django_capture_on_commit_callbacks,
):
    settings.CONSOLE_UPLOAD_JOB_ROWS = 2
    client.force_login(owner)
    upload = _page_upload(client, BROKEN)
    api_upload = _api_upload(client_for(owner), BROKEN)

    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(f"/tasks/sentiment/console/uploads/{upload.pk}/", MAPPING)
        api = client_for(owner).post(f"/api/v1/tasks/sentiment/uploads/{api_upload}/import", {"fields": {"prompt": "sentence"}, "uid": "id"}, format="json")

    assert page.status_code == 202 and 'data-status="queued"' in page.content.decode() and 'hx-trigger="every 1s"' in page.content.decode()
    assert api.status_code == 202 and api.json()["status"] == "queued"
    assert default_queue.count == 2
    with django_capture_on_commit_callbacks(execute=True):
        django_rq.get_worker("default", worker_class=SimpleWorker).work(burst=True)

    status = client.get(f"/tasks/sentiment/console/uploads/{upload.pk}/status").content.decode()
    assert 'data-status="failed"' in status and "line 3: expected 2 fields as in the header, found 3" in status
    polled = client_for(owner).get(f"/api/v1/tasks/sentiment/uploads/{api_upload}").json()
    assert polled["status"] == "failed" and polled["errors"] == [{"line": 3, "message": "expected 2 fields as in the header, found 3"}]
    assert not Context.objects.filter(uid="a1").exists()
