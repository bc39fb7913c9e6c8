"""An owner downloads a round of image examples as one zip: the JSONL export (each line names its
image by sha256 in the context and the input) and, beside it, ``images/<sha256>.<ext>`` holding
exactly the stored, cleaned bytes of every image the lines name, and no other. Others get a 403."""

import io
import json
import zipfile

import pytest
from django.test import Client

from annotation.services import create_example
from leaderboard.services import register_model_directory
from tasks.data.images import ingest_images, open_image
from tasks.models import Context, ContextImage
from tasks.loop.registry import clear_cache
from tests.image_support import SHAPES, image_file
from tests.vqa_support import build_tiny_vilt, vqa_task


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    from django.core.cache import cache

    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1000
    clear_cache()
    yield
    clear_cache()
    cache.clear()


def test_a_round_export_carries_its_images_beside_the_jsonl(owner, annotator, tmp_path):
    task = vqa_task(owner)
    ingest_images(task=task, acting_user=owner, files=[image_file(f"{s}.png", shape=s) for s in SHAPES], round_number=1)
    model = register_model_directory(actor=owner, task=task, name="vilt", path=build_tiny_vilt(tmp_path / "vilt"))
    round1 = task.rounds.get(number=1)
    round1.target_models.add(model)
    used = list(Context.objects.filter(round=round1).order_by("id")[:2])  # the third image has no example
    for context in used:
        create_example(user=annotator, context=context, input={"question": "what shape is in the picture"}, target={"answers": ["a shape"]})
    client = Client()
    client.force_login(owner)
    response = client.get(f"/tasks/{task.code}/rounds/1/export-with-images.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    name = f"{task.code}-r1"
    lines = [json.loads(line) for line in archive.read(f"{name}/{name}.jsonl").decode().splitlines()]
    assert len(lines) == 2 and {line["input"]["image"] for line in lines} == {c.uid for c in used}
    assert all(line["context"]["data"]["image"] == line["input"]["image"] for line in lines)
    images = sorted(n for n in archive.namelist() if n.startswith(f"{name}/images/"))
    assert images == sorted(f"{name}/images/{c.uid}.png" for c in used)
    for context in used:
        fh, _ = open_image(ContextImage.objects.get(sha256=context.uid))
        with fh:
            assert archive.read(f"{name}/images/{context.uid}.png") == fh.read()
    client.force_login(annotator)
    assert client.get(f"/tasks/{task.code}/rounds/1/export-with-images.zip").status_code == 403
