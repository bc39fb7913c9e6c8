"""``/tasks/<code>/rounds/<n>/croissant-with-audio.json``: the Croissant description of a speech
round's zip (the JSONL and ``audio/<sha256>.flac`` beside it), for the task's owners as the zip
itself. ``mlcroissant validate`` accepts it, and saved beside the zip it loads with
``mlcroissant.Dataset`` (the zip's sha256 checked): one ``examples`` record per example, and one
``audio`` record per clip with the clip's FLAC bytes (an ``sc:AudioObject``), named by their sha256."""

import json

import pytest
from django.test import Client

from annotation.models import Example
from tasks.data.audio import ingest_audio
from tasks.models import Context
from tests.audio_support import audio_task, clip_file
from tests.croissant_support import validate_and_load

LOAD = """
import hashlib, io, json, sys
import mlcroissant as mlc
import soundfile
dataset = mlc.Dataset(jsonld=sys.argv[1])
text = lambda v: v.decode() if isinstance(v, bytes) else v
examples = [{k.split("/")[-1]: text(v) for k, v in r.items()} for r in dataset.records("examples")]
clips = [{"sha256": text(r["audio/sha256"]), "digest": hashlib.sha256(r["audio/content"]).hexdigest(),
          "frames": len(soundfile.read(io.BytesIO(r["audio/content"]))[0])} for r in dataset.records("audio")]
print(json.dumps({"examples": examples, "clips": clips}, default=str))
"""


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_audio_zip_loads_with_its_croissant(owner, annotator, tmp_path):
    task = audio_task(owner, "spoken-sentences")
    ingest_audio(task=task, acting_user=owner, files=[clip_file(f"c{i}.wav", freq=300 + 200 * i, seconds=0.5) for i in range(3)],
                 round_number=1)
    contexts = list(Context.objects.filter(round__task=task).order_by("id"))[:2]
    examples = [Example.objects.create(round=c.round, context=c, author=annotator, input={"note": "noisy"},
                                       target={"transcripts": [f"clip {i}"]}, model_output={"transcript": "a"}, model_wrong=True)
                for i, c in enumerate(contexts)]
    browser = Client()
    browser.force_login(owner)
    outsider = Client()
    outsider.force_login(annotator)

    archive = b"".join(browser.get(f"/tasks/{task.code}/rounds/1/export-with-audio.zip").streaming_content)
    answer = browser.get(f"/tasks/{task.code}/rounds/1/croissant-with-audio.json")
    refused = outsider.get(f"/tasks/{task.code}/rounds/1/croissant-with-audio.json")
    no_images = browser.get(f"/tasks/{task.code}/rounds/1/croissant-with-images.json")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / f"{task.code}-r1.zip").write_bytes(archive)
    (folder / "croissant.json").write_bytes(answer.content)
    validated, loaded = validate_and_load(folder / "croissant.json", LOAD, tmp_path / "cache")

    assert answer.status_code == 200 and refused.status_code == 403 and no_images.status_code == 404
    said = validated.stdout + validated.stderr
    assert validated.returncode == 0 and "Done." in said and "WARNING" not in said, said
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert sorted(int(r["id"]) for r in records["examples"]) == sorted(e.pk for e in examples)
    assert sorted(r["context_data_clip"] for r in records["examples"]) == sorted(c.uid for c in contexts)
    assert sorted(r["sha256"] for r in records["clips"]) == sorted(c.uid for c in contexts)
    assert all(r["digest"] == r["sha256"] and r["frames"] == 8000 for r in records["clips"])
    body = json.loads(answer.content)
    files = {d["@id"]: d for d in body["distribution"]}
    assert files["audio-files"]["encodingFormat"] == "audio/flac" and files["audio-files"]["@type"] == "cr:FileSet"
    assert {f["dataType"] for f in body["recordSet"][1]["field"]} == {"sc:Text", "sc:AudioObject"}
