"""Bad images are refused with a message that says what is wrong, and nothing is stored (no file
in the storage, no image record, no context): a text file renamed ``.png``, a 20,000 x 20,000
image, a truncated JPEG, a zip with a member outside its folder (and a few neighbours)."""

import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from dynabench.errors import FieldErrors
from tasks.data.images import ingest_images
from tasks.models import Context, ContextImage
from tests.image_support import draw, encode, image_file, shapes_task, zip_file


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def huge_png(side: int = 20_000) -> bytes:
    """A valid 1-bit PNG of ``side`` x ``side`` pixels (all black): ~50 KB on disk, 400 M pixels decoded."""
    row = b"\x00" + b"\x00" * ((side + 7) // 8)
    compressor = zlib.compressobj(9)
    body = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", body) + _png_chunk(b"IEND", b"")


def truncated_jpeg() -> bytes:
    data = encode(draw("square", size=128), "JPEG", quality=95)
    return data[: len(data) // 2]


CASES = [
    ("text renamed .png", lambda: [SimpleUploadedFile("cat.png", b"this is not an image, only text\n" * 20)],
     "is not an image Pillow can read"),
    ("20,000 x 20,000 image", lambda: [SimpleUploadedFile("big.png", huge_png())],
     "has more pixels than the limit of 40,000,000 (Image size (400000000 pixels)"),
    ("truncated JPEG", lambda: [SimpleUploadedFile("cut.jpg", truncated_jpeg())], "damaged or truncated"),
    ("zip with a path outside its folder",
     lambda: [zip_file({"ok.png": encode(draw()), "../../etc/evil.png": encode(draw(seed=2))})],
     "leads outside the zip's folder"),
    ("zip with an absolute path", lambda: [zip_file({"/tmp/abs.png": encode(draw())})], "leads outside the zip's folder"),
    ("BMP, a format outside the allow-list", lambda: [SimpleUploadedFile("pic.png", encode(draw(), "BMP"))],
     "is not an image Pillow can read as GIF, JPEG, PNG, WEBP"),
    ("good files then a bad one", lambda: [image_file("a.png"), image_file("b.png", seed=3),
                                           SimpleUploadedFile("c.jpg", truncated_jpeg())], "'c.jpg' is damaged"),
    ("a zip holding a text file", lambda: [zip_file({"a.png": encode(draw()), "labels.txt": b"a,circle"})], "is not an image"),
]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.mark.parametrize("what,files,message", CASES, ids=[c[0] for c in CASES])
def test_it_refuses_bad_images_and_stores_nothing(owner, media, what, files, message):
    task = shapes_task(owner)
    contexts_before = Context.objects.count()
    with pytest.raises(FieldErrors) as refused:
        ingest_images(task=task, acting_user=owner, files=files(), round_number=1)
    assert message in refused.value.errors["files"][0]
    assert ContextImage.objects.count() == 0
    assert Context.objects.count() == contexts_before
    stored = [p for p in media.rglob("*") if p.is_file()] if media.exists() else []
    assert stored == []
