"""Every console URL refuses anyone but the task's owners and admins: 403 for a logged-in
non-owner (an owner of another task included) on GET and POST, the log-in page for a visitor."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.data import uploads
from validation.tests.conftest import make_user

URLS = [
    "/tasks/{code}/console/",
    "/tasks/{code}/console/preview",
    "/tasks/{code}/console/rounds/",
    "/tasks/{code}/console/rounds/open",
    "/tasks/{code}/console/rounds/1/close",
    "/tasks/{code}/console/rounds/1/dashboard",
    "/tasks/{code}/console/dashboard/",
    "/tasks/{code}/console/uploads/",
    "/tasks/{code}/console/uploads/{upload}/",
    "/tasks/{code}/console/uploads/{upload}/status",
    "/tasks/{code}/console/uploads/{upload}/preview",
    "/tasks/{code}/console/people/",
    "/tasks/{code}/console/people/role/grant",
    "/tasks/{code}/console/people/role/revoke",
    "/tasks/{code}/console/people/ban/ban",
    "/tasks/{code}/console/people/ban/lift",
    "/tasks/{code}/console/people/{person}/",
]


@pytest.fixture
def upload(owner, sentiment_task, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    file = SimpleUploadedFile("contexts.csv", b"uid,prompt\nc1,A prompt.\n")
    return uploads.store_upload(task=sentiment_task, acting_user=owner, file=file, target="contexts", options={"round": 1})


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_non_owner_gets_403(client, url, method, sentiment_task, nli_task, upload, annotator):
    other_owner = make_user("oscar")
    nli_task.owners.add(other_owner)
    path = url.format(code=sentiment_task.code, upload=upload.pk, person=annotator.username)
    for person in (annotator, other_owner):
        client.force_login(person)
        response = getattr(client, method)(path, {"user": annotator.pk, "role": "annotator"})
        assert response.status_code == 403, (path, person.username, response.status_code)
    client.logout()
    response = getattr(client, method)(path)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("url", [u for u in URLS if not u.endswith(("open", "grant", "revoke", "ban", "lift", "preview"))])
def test_an_owner_and_an_admin_open_every_page(client, url, sentiment_task, upload, owner, admin_user, annotator):
    path = url.format(code=sentiment_task.code, upload=upload.pk, person=annotator.username)
    for person in (owner, admin_user):
        client.force_login(person)
        assert client.get(path).status_code == 200, (path, person.username)


def test_the_console_home_lists_only_the_tasks_one_owns(client, sentiment_task, nli_task):
    person = make_user("oscar")
    nli_task.owners.add(person)
    client.force_login(person)
    page = client.get("/console/").content.decode()
    assert "/tasks/nli/console/" in page and "/tasks/sentiment/console/" not in page
