"""An annotator of an image task that takes annotators' images uploads one from the write page:
it is checked and cleaned as an owner's upload, becomes a context of the open round (tagged
``annotator-upload``) and the workspace shows it; a bad file is refused with the reason and
nothing stored; a task that does not take them, or someone banned, is refused."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tasks.access import ban_user
from tasks.models import Context, ContextImage
from tests.image_support import image_file, shapes_task


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_an_annotator_uses_their_own_image(client, owner, annotator):
    task = shapes_task(owner)
    url = reverse("annotation:upload_image", args=[task.code])
    client.force_login(annotator)
    response = client.post(url, {"image": image_file("my-square.png", shape="square")}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    image = ContextImage.objects.get(task=task)
    assert image.uploaded_by == annotator
    context = Context.objects.get(round__task=task, uid=image.sha256)
    assert (context.tag, context.data) == ("annotator-upload", {"image": image.sha256})
    body = response.content.decode()
    assert f'data-context-image="{image.sha256}"' in body and "my-square" not in body
    assert "Your image is the context now" in body

    refused = client.post(url, {"image": SimpleUploadedFile("x.png", b"not an image"), "current": context.pk}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 400 and "is not an image Pillow can read" in refused.content.decode()
    assert ContextImage.objects.count() == 1 and Context.objects.filter(round__task=task).count() == 1

    ban_user(task=task, user=annotator, acting_user=owner)
    assert client.post(url, {"image": image_file("b.png", seed=7)}, HTTP_HX_REQUEST="true").status_code == 403
    assert ContextImage.objects.count() == 1


def test_a_task_that_does_not_take_annotators_images_refuses_them(client, owner, annotator):
    task = shapes_task(owner)
    task.config = {k: v for k, v in task.config.items() if k != "annotator_image_uploads"}
    task.save()
    client.force_login(annotator)
    response = client.post(reverse("annotation:upload_image", args=[task.code]), {"image": image_file()})
    assert response.status_code == 400 and "does not take images from annotators" in response.content.decode()
    assert not ContextImage.objects.exists()
