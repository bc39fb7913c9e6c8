"""For the tests of images: real image files drawn with Pillow, zips of them, and the image
classification task of ``tasks/data/task_definitions/shapes-images.json`` (owner given)."""

import io
import json
import zipfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image, ImageDraw

DEFINITION = Path(__file__).resolve().parents[1] / "tasks" / "data" / "task_definitions" / "shapes-images.json"
SHAPES = ("circle", "square", "triangle")


def draw(shape: str = "circle", *, size: int = 64, seed: int = 0) -> Image.Image:
    """An RGB picture of ``shape`` (circle, square, triangle) on a coloured background; ``seed``
    moves the shape, so different seeds give different bytes."""
    image = Image.new("RGB", (size, size), ((40 * seed) % 256, 120, 200))
    pen = ImageDraw.Draw(image)
    o = seed % 8
    box = (8 + o, 8 + o, size - 16 + o, size - 16 + o)
    if shape == "circle":
        pen.ellipse(box, fill=(250, 250, 0))
    elif shape == "square":
        pen.rectangle(box, fill=(250, 0, 0))
    else:
        pen.polygon([(box[0], box[3]), (box[2], box[3]), ((box[0] + box[2]) // 2, box[1])], fill=(0, 250, 0))
    return image


def encode(image: Image.Image, fmt: str = "PNG", **options) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def image_file(name: str = "circle.png", *, shape: str = "circle", seed: int = 0, fmt: str = "PNG", **options) -> SimpleUploadedFile:
    """An uploaded image file (``SimpleUploadedFile``) of a drawn shape."""
    return SimpleUploadedFile(name, encode(draw(shape, seed=seed), fmt, **options), content_type="application/octet-stream")


def zip_file(members: dict[str, bytes], name: str = "images.zip") -> SimpleUploadedFile:
    """An uploaded zip holding ``{member name: bytes}``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return SimpleUploadedFile(name, out.getvalue(), content_type="application/zip")


def shapes_task(owner=None):
    """Create the ``shapes`` image classification task (round 1 open), owned by ``owner`` if given."""
    from tasks.data.seed import create_task

    task, _ = create_task(json.loads(DEFINITION.read_text(encoding="utf-8")))
    if owner is not None:
        task.owners.add(owner)
    return task
