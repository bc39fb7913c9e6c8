"""``/tasks/<code>/rounds/<n>/croissant-with-images.json``: the Croissant description of an image
round's zip (the JSONL and ``images/<sha256>.png`` beside it) validates with ``mlcroissant`` and,
saved beside the zip, reads one ``images`` record per image an example names, its content an image."""

import json

import pytest
from django.test import Client

from annotation.models import Example
from tasks.data.images import ingest_images
from tasks.models import Context
from tests.croissant_support import validate_and_load
from tests.image_support import SHAPES, image_file
from tests.vqa_support import vqa_task

LOAD = """
import json, sys
import mlcroissant as mlc
dataset = mlc.Dataset(jsonld=sys.argv[1])
print(json.dumps([{"sha256": r["images/sha256"].decode(), "size": list(r["images/content"].size)} for r in dataset.records("images")]))
"""


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_image_zip_loads_with_its_croissant(owner, annotator, tmp_path):
    task = vqa_task(owner)
    ingest_images(task=task, acting_user=owner, files=[image_file(f"{s}.png", shape=s) for s in SHAPES], round_number=1)
    used = list(Context.objects.filter(round__task=task).order_by("id"))[:2]
    for context in used:
        Example.objects.create(round=context.round, context=context, author=annotator, input={"question": "what shape"},
                               target={"answers": ["a shape"]}, model_output={"answer": "red"}, model_wrong=True)
    browser = Client()
    browser.force_login(owner)
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / f"{task.code}-r1.zip").write_bytes(b"".join(browser.get(f"/tasks/{task.code}/rounds/1/export-with-images.zip").streaming_content))
    (folder / "croissant.json").write_bytes(browser.get(f"/tasks/{task.code}/rounds/1/croissant-with-images.json").content)

    validated, loaded = validate_and_load(folder / "croissant.json", LOAD, tmp_path / "cache")

    said = validated.stdout + validated.stderr
    assert validated.returncode == 0 and "Done." in said and "WARNING" not in said, said
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert sorted(r["sha256"] for r in records) == sorted(c.uid for c in used)
    assert all(r["size"] == [64, 64] for r in records)
