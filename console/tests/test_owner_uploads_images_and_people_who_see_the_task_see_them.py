"""The console's image page: an owner uploads images as contexts and sees their thumbnails; a
refused file shows why (400); non-owners get 403. Images and thumbnails are served by hash to
people who may see the task, and to nobody else (404)."""

import pytest
from django.urls import reverse

from tasks.models import Context, ContextImage
from tests.image_support import image_file, shapes_task, zip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_owner_uploads_images_and_people_who_see_the_task_see_them(client, owner, annotator, outsider):
    task = shapes_task(owner)
    url = reverse("console:images", args=[task.code])
    client.force_login(owner)
    response = client.post(url, {"round": 1, "files": [image_file("a.png"), image_file("b.jpg", seed=4, fmt="JPEG")]})
    assert response.status_code == 302
    assert ContextImage.objects.filter(task=task).count() == 2
    page = client.get(url)
    assert page.status_code == 200
    image = ContextImage.objects.filter(task=task).first()
    thumb_url = reverse("tasks:image_thumb", args=[task.code, image.sha256])
    assert thumb_url in page.content.decode()
    assert Context.objects.filter(round__task=task, uid=image.sha256).exists()

    refused = client.post(url, {"round": 1, "files": [zip_file({"../x.png": b"x"})]})
    assert refused.status_code == 400
    assert "leads outside the zip&#x27;s folder" in refused.content.decode()

    client.force_login(annotator)
    assert client.post(url, {"round": 1, "files": [image_file("c.png", seed=9)]}).status_code == 403
    full = client.get(reverse("tasks:image", args=[task.code, image.sha256]))
    assert full.status_code == 200 and full["Content-Type"] in ("image/png", "image/jpeg")
    assert b"".join(full.streaming_content)[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0", b"\xff\xd8\xff\xdb")
    assert client.get(thumb_url)["Content-Type"] == "image/jpeg"

    task.active = False
    task.save()
    client.force_login(outsider)
    assert client.get(thumb_url).status_code == 404
    assert client.get(reverse("tasks:image", args=["sentiment", image.sha256])).status_code == 404
