"""Uploaded images (single files and a zip) become contexts of the round: stored once under the
sha256 of their cleaned bytes (never under the uploaded name), without EXIF or comments, with a
thumbnail; uploading them again adds nothing."""

import io

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from dynabench.errors import NotAllowed
from tasks.data.image_files import stored_name, thumbnail_name
from tasks.data.images import ingest_images
from tasks.models import Context, ContextImage
from tests.image_support import draw, encode, image_file, shapes_task, zip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def jpeg_with_exif() -> bytes:
    exif = Image.Exif()
    exif[0x010E] = "label: triangle"  # ImageDescription
    exif[0x0112] = 6  # Orientation: rotate 90 degrees to display
    return encode(draw("triangle", size=80).crop((0, 0, 80, 40)), "JPEG", exif=exif.tobytes(), quality=95)


def test_images_become_contexts_named_by_their_hash(owner, media):
    task = shapes_task(owner)
    files = [
        image_file("circle-1.png"),
        SimpleUploadedFile("triangle-secret.jpg", jpeg_with_exif()),
        zip_file({"shapes/square.webp": encode(draw("square", seed=5), "WEBP"),
                  "shapes/anim.gif": encode(draw(seed=1), "GIF", save_all=True, append_images=[draw(seed=2)], comment=b"circle"),
                  "__MACOSX/._square.webp": b"junk"}),
    ]
    result = ingest_images(task=task, acting_user=owner, files=files, round_number=1)
    assert (result.added, result.unchanged) == (4, 0)
    store = storages["default"]
    for record in ContextImage.objects.filter(task=task):
        data = store.open(stored_name(record.sha256, record.ext)).read()
        import hashlib

        assert hashlib.sha256(data).hexdigest() == record.sha256
        image = Image.open(io.BytesIO(data))
        assert not image.getexif() and "comment" not in image.info and "exif" not in image.info
        thumb = Image.open(store.open(thumbnail_name(record.sha256)))
        assert thumb.format == "JPEG" and max(thumb.size) <= 256
        context = Context.objects.get(round__task=task, uid=record.sha256)
        assert context.data == {"image": record.sha256}
    names = [p.name for p in media.rglob("*") if p.is_file()]
    assert not any("circle" in n or "triangle" in n or "square" in n for n in names)
    jpeg = ContextImage.objects.get(task=task, ext="jpg")
    assert (jpeg.width, jpeg.height) == (40, 80)  # the EXIF orientation was applied before it was dropped
    assert jpeg.original_name == "triangle-secret.jpg"
    gif = ContextImage.objects.get(task=task, ext="gif")
    assert Image.open(store.open(stored_name(gif.sha256, "gif"))).n_frames == 2

    again = ingest_images(task=task, acting_user=owner, files=[image_file("copy.png")], round_number=1)
    assert (again.added, again.unchanged) == (0, 1)
    assert ContextImage.objects.filter(task=task).count() == 4


def test_only_owners_upload_images(owner, annotator):
    task = shapes_task(owner)
    with pytest.raises(NotAllowed):
        ingest_images(task=task, acting_user=annotator, files=[image_file()], round_number=1)
    assert not ContextImage.objects.exists()
