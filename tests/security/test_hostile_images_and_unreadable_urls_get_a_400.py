"""A PNG whose zTXt chunk inflates to 200 MB, a JPEG cut in half and the endpoint URL ``http://[::1``
used to answer 500 (Pillow's ``ValueError``/``OSError`` while reading the header, ``urlsplit``'s
``ValueError``). Every route that takes them now answers 400 with a message saying what is wrong, and
stores nothing: the write page's own-image upload, the console's images page and the images API;
the researcher's endpoint submission API and the console's endpoint form."""

import io
import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from tasks.models import Context, ContextImage, MLModel
from tests.api.conftest import client_for
from tests.image_support import shapes_task


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def text_bomb_png() -> bytes:
    """An 8 x 8 PNG of about 200 KB with a zTXt chunk that inflates to 200 MB (Pillow stops at its
    ``MAX_TEXT_CHUNK`` and raises ``ValueError: Decompressed data too large``)."""
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(out, format="PNG")
    png = out.getvalue()
    bomb = _chunk(b"zTXt", b"Comment\x00\x00" + zlib.compress(b"\x00" * (200 * 1024 * 1024), 9))
    return png[:33] + bomb + png[33:]  # after the 8-byte signature and the 25-byte IHDR chunk


def half_jpeg() -> bytes:
    """An 8 x 8 JPEG cut in half: the cut falls inside its tables, which Pillow reads on opening (``OSError``)."""
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 120, 200)).save(out, format="JPEG", quality=90)
    return out.getvalue()[: len(out.getvalue()) // 2]


BAD_IMAGES = {
    "bomb.png": (text_bomb_png, "metadata chunk"),
    "half.jpg": (half_jpeg, "damaged or truncated"),
}


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _stored(media):
    files = [p for p in media.rglob("*") if p.is_file()] if media.exists() else []
    return ContextImage.objects.count(), Context.objects.count(), len(files)


def test_the_hostile_files_are_what_they_claim():
    assert 150_000 < len(text_bomb_png()) < 250_000
    with pytest.raises(ValueError, match="Decompressed data too large"):
        Image.open(io.BytesIO(text_bomb_png()))
    with pytest.raises(OSError):
        Image.open(io.BytesIO(half_jpeg())).load()


@pytest.mark.parametrize("name", sorted(BAD_IMAGES))
def test_every_image_route_refuses_the_file_with_a_400_and_stores_nothing(name, client, owner, annotator, media):
    make, says = BAD_IMAGES[name]
    task = shapes_task(owner)
    before = _stored(media)

    def upload():
        return SimpleUploadedFile(name, make(), content_type="application/octet-stream")

    client.force_login(annotator)
    write = client.post(reverse("annotation:upload_image", args=[task.code]), {"image": upload()}, HTTP_HX_REQUEST="true")
    client.force_login(owner)
    console = client.post(reverse("console:images", args=[task.code]), {"round": 1, "files": [upload()]})
    api = client_for(owner).post(f"/api/v1/tasks/{task.code}/images", {"round": 1, "files": [upload()]}, format="multipart")

    for route, response in (("write page", write), ("console", console), ("API", api)):
        assert response.status_code == 400, route
        assert name in response.content.decode() and says in response.content.decode(), route
    assert _stored(media) == before


def test_an_unreadable_endpoint_url_is_a_400_on_the_api_and_the_console_form(client, owner, researcher, sentiment_task):
    url = "http://[::1"
    before = MLModel.objects.count()
    api = client_for(researcher).post("/api/v1/models/endpoint", {
        "task": sentiment_task.code, "name": "broken url", "base_url": url, "model_name": "x",
    }, format="json")
    assert api.status_code == 400 and api.json()["code"] == "endpoint_bad_url"
    assert "IPv6 address goes in brackets" in api.content.decode()

    client.force_login(owner)
    form = client.post(reverse("console:add_endpoint", args=[sentiment_task.code]), {
        "name": "broken url", "base_url": url, "model_name": "x", "api": "chat", "timeout_s": 10, "max_retries": 1,
        "max_concurrency": 2,
    })
    assert form.status_code == 400 and "IPv6 address goes in brackets" in form.content.decode()
    assert MLModel.objects.count() == before
