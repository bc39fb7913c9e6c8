"""An owner downloads a round of a speech recognition task as one zip: the JSONL export (each line
names its clip by sha256 in the context) and, beside it, ``audio/<sha256>.flac`` holding exactly the
stored bytes of every clip the round's examples name, each once (their sha256 is their name), and
nothing of another round or of a clip no example names. The same content gives the same bytes. An
annotator gets a 403, a visitor the login page, a media type the platform does not have a 404. The
round page links the zip and its Croissant description for owners only."""

import hashlib
import io
import json
import zipfile

import pytest
from django.test import Client

from annotation.models import Example
from tasks.data.audio import ingest_audio
from tasks.data.audio_files import read_stored
from tasks.models import Context, Round
from tests.audio_support import audio_task, clip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _example(context, author, words):
    return Example.objects.create(round=context.round, context=context, author=author, input={"note": ""},
                                  target={"transcripts": [words]}, model_output={"transcript": "a tone"}, model_wrong=True)


def test_a_round_export_carries_its_audio_clips_beside_the_jsonl(owner, annotator):
    task = audio_task(owner, "spoken-sentences")
    ingest_audio(task=task, acting_user=owner, files=[clip_file(f"c{i}.wav", freq=220 + 110 * i) for i in range(3)], round_number=1)
    Round.objects.create(task=task, number=2)
    ingest_audio(task=task, acting_user=owner, files=[clip_file("later.flac", freq=990)], round_number=2)
    first, second, _unused = Context.objects.filter(round__number=1, round__task=task).order_by("id")
    later = Context.objects.get(round__number=2, round__task=task)
    examples = [_example(first, annotator, "one tone"), _example(first, annotator, "the same tone"), _example(second, annotator, "two")]
    _example(later, annotator, "a later round")
    client = Client()
    client.force_login(owner)

    response = client.get(f"/tasks/{task.code}/rounds/1/export-with-audio.zip")
    body = b"".join(response.streaming_content)
    again = b"".join(client.get(f"/tasks/{task.code}/rounds/1/export-with-audio.zip").streaming_content)

    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert body == again
    name = f"{task.code}-r1"
    archive = zipfile.ZipFile(io.BytesIO(body))
    lines = [json.loads(line) for line in archive.read(f"{name}/{name}.jsonl").decode().splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(e.pk for e in examples)
    assert {line["context"]["data"]["clip"] for line in lines} == {first.uid, second.uid}
    clips = sorted(n for n in archive.namelist() if n != f"{name}/{name}.jsonl")
    assert clips == sorted(f"{name}/audio/{c.uid}.flac" for c in (first, second))
    for member in clips:
        data = archive.read(member)
        sha256 = member.rsplit("/", 1)[-1].removesuffix(".flac")
        assert hashlib.sha256(data).hexdigest() == sha256 and data == read_stored(sha256)[0]
    assert client.get(f"/tasks/{task.code}/rounds/1/export-with-video.zip").status_code == 404
    page = client.get(f"/tasks/{task.code}/rounds/1/").content.decode()
    assert f'href="/tasks/{task.code}/rounds/1/export-with-audio.zip" data-export-audio' in page
    assert f'href="/tasks/{task.code}/rounds/1/croissant-with-audio.json" data-croissant-audio' in page
    client.force_login(annotator)
    assert "export-with-audio" not in client.get(f"/tasks/{task.code}/rounds/1/").content.decode()
    assert client.get(f"/tasks/{task.code}/rounds/1/export-with-audio.zip").status_code == 403
    visitor = Client().get(f"/tasks/{task.code}/rounds/1/export-with-audio.zip")
    assert visitor.status_code == 302 and "/login" in visitor["Location"]
