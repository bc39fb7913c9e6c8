"""When the disk under the storage (``MEDIA_ROOT``) fills up while an upload is written, the upload is
refused with 507 ``storage_full`` and a message saying the server's storage is full (JSON on the API,
a page of its own on the console), and nothing of it is kept: no file, not even a truncated one under
the name a later upload would take for stored, and no record. Once there is room, the same upload
goes through. Images, audio clips, a contexts file and a model archive, each through its real view;
the disk is ``tests/full_disk.py``'s, which fails a write past its room with ``ENOSPC``."""

import html
import io

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tasks.models import Context, ContextAudio, ContextImage, MLModel, Upload
from tests.api.conftest import tar_gz
from tests.audio_support import audio_task, encode as encode_audio, tone
from tests.image_support import draw, encode as encode_image, image_file, shapes_task

MESSAGE = "The server's storage is full"


def api(user) -> Client:
    """A client that gets the 507 answer rather than the exception (as a real client would)."""
    return Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")


def named(data: bytes, name: str):
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def assert_refused_as_full(response, *, json: bool = True) -> None:
    assert response.status_code == 507
    if json:
        assert response.json()["code"] == "storage_full" and MESSAGE in response.json()["detail"]
    else:
        page = html.unescape(response.content.decode())
        assert MESSAGE in page and "<h1>Storage full</h1>" in page


def test_images_through_the_api(owner, full_disk):
    task = shapes_task(owner)
    images = [encode_image(draw(shape, seed=n)) for n, shape in enumerate(("circle", "square", "triangle"))]
    full_disk.room_bytes = len(images[0]) + len(images[1]) // 2  # the first image fits, the second does not

    def upload():
        return api(owner).post(f"/api/v1/tasks/{task.code}/images",
                               {"files": [named(data, f"{n}.png") for n, data in enumerate(images)], "round": 1})

    assert_refused_as_full(upload())
    assert full_disk.files() == []
    assert not ContextImage.objects.filter(task=task).exists() and not Context.objects.filter(round__task=task).exists()

    full_disk.room_bytes = 10_000_000
    assert upload().status_code == 201
    assert ContextImage.objects.filter(task=task).count() == 3


def test_images_on_the_console_page(client, owner, full_disk):
    task = shapes_task(owner)
    client.force_login(owner)
    client.raise_request_exception = False

    response = client.post(f"/tasks/{task.code}/console/images/", {"round": 1, "files": [image_file("a.png")]})

    assert_refused_as_full(response, json=False)
    assert full_disk.files() == [] and not ContextImage.objects.filter(task=task).exists()


def test_audio_clips_through_the_api(owner, full_disk):
    task = audio_task(owner, "spoken-sentences")
    clips = [encode_audio(tone(200 + 100 * n), "flac") for n in range(2)]
    full_disk.room_bytes = len(clips[0])  # the first clip is stored, its model copy is not

    def upload():
        return api(owner).post(f"/api/v1/tasks/{task.code}/audio", {"files": [named(c, f"{n}.flac") for n, c in enumerate(clips)], "round": 1})

    assert_refused_as_full(upload())
    assert full_disk.files() == []
    assert not ContextAudio.objects.filter(task=task).exists() and not Context.objects.filter(round__task=task).exists()

    full_disk.room_bytes = 50_000_000
    assert upload().status_code == 201
    assert ContextAudio.objects.filter(task=task).count() == 2


def test_a_contexts_file_through_the_api_and_the_console(client, owner, sentiment_task, full_disk):
    body = "".join(f'{{"uid": "c{n}", "prompt": "Sentence {n} about the service."}}\n' for n in range(200)).encode()
    full_disk.room_bytes = len(body) // 2

    refused = api(owner).post("/api/v1/tasks/sentiment/uploads", {"file": named(body, "contexts.jsonl"), "target": "contexts", "round": 1})
    assert_refused_as_full(refused)
    client.force_login(owner)
    client.raise_request_exception = False
    page = client.post("/tasks/sentiment/console/uploads/", {"target": "contexts", "round": 1, "file": named(body, "contexts.jsonl")})
    assert_refused_as_full(page, json=False)
    assert full_disk.files() == [] and not Upload.objects.exists()

    full_disk.room_bytes = 10 * len(body)
    assert api(owner).post("/api/v1/tasks/sentiment/uploads", {"file": named(body, "contexts.jsonl"), "target": "contexts",
                                                                 "round": 1}).status_code == 201


@pytest.mark.slow
def test_a_model_archive_through_the_api(researcher, sentiment_task, tiny_classifier_dir, full_disk):
    archive = tar_gz(tiny_classifier_dir).getvalue()
    # The staged copy (under MEDIA_ROOT, on the same disk) fits; the archive stored beside it does not.
    full_disk.room_bytes = len(archive) + len(archive) // 2

    def submit():
        return api(researcher).post("/api/v1/models", {"task": "sentiment", "name": "tiny-bert", "archive": named(archive, "model.tar.gz")})

    assert_refused_as_full(submit())
    assert full_disk.files() == []
    assert not MLModel.objects.filter(owner=researcher).exists()

    full_disk.room_bytes = 10 * len(archive)
    assert submit().status_code == 202  # accepted: the job unpacks it
    assert MLModel.objects.filter(owner=researcher, status="unpacking").exists()
