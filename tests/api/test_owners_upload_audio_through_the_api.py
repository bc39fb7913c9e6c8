"""Owners upload audio clips through ``POST /api/v1/tasks/{code}/audio`` with the console page's checks
(``tasks.data.audio.ingest_audio``): a zip of clips and single files become contexts of the round, are
listed and play from their URL; a text file renamed .wav, a truncated WAV and a zip bomb are each refused
with a 400 naming the file and the reason, storing nothing; people who are not owners get a 403."""

import io

import pytest

from tasks.models import Context, ContextAudio
from tests.api.conftest import client_for
from tests.audio_support import audio_task, encode, noise, sweep, tone, zip_file


def _file(data: bytes, name: str):
    upload = io.BytesIO(data)
    upload.name = name
    return upload


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _stored(media):
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_an_owner_uploads_a_zip_and_files_lists_them_and_plays_one(owner, annotator, media):
    task = audio_task(owner, "spoken-sentences")
    members = {f"clips/{n}.flac": encode(tone(200 + 50 * n), "flac") for n in range(4)}
    client = client_for(owner)
    answer = client.post(f"/api/v1/tasks/{task.code}/audio", {
        "files": [zip_file(members), _file(encode(sweep(), "mp3"), "extra.mp3")], "round": 1}, format="multipart")
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["added"], body["unchanged"], len(body["clips"])) == (5, 0, 5)
    assert Context.objects.filter(round__task=task).count() == 5
    clip = body["clips"][0]
    assert clip["url"] == f"/tasks/{task.code}/audio/{clip['sha256']}"
    played = client.get(clip["url"])
    assert played.status_code == 200 and played["Content-Type"] == "audio/flac"
    assert b"".join(played.streaming_content)[:4] == b"fLaC"
    assert {c["sha256"] for c in client.get(f"/api/v1/tasks/{task.code}/audio").json()} == {c["sha256"] for c in body["clips"]}
    refused = client_for(annotator).post(f"/api/v1/tasks/{task.code}/audio", {
        "files": [_file(encode(noise()), "mine.wav")], "round": 1}, format="multipart")
    assert refused.status_code == 403
    assert ContextAudio.objects.count() == 5


BAD = [
    ("text renamed .wav", lambda: _file(b"only text, not audio\n" * 20, "cat.wav"), "'cat.wav' is not audio that can be read"),
    ("truncated WAV", lambda: _file(encode(tone(seconds=2))[:20000], "cut.wav"), "'cut.wav' is truncated"),
    ("zip bomb", lambda: zip_file({"bomb.wav": b"RIFF" + b"\x00" * 30_000_000}, "bomb.zip"),
     "'bomb.wav' in 'bomb.zip' has 30,000,004 bytes unpacked; the limit is 20,971,520."),
]


@pytest.mark.parametrize("what,make,message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_refused_with_its_reason_and_nothing_is_stored(owner, media, what, make, message):
    task = audio_task(owner)
    answer = client_for(owner).post(f"/api/v1/tasks/{task.code}/audio", {
        "files": [_file(encode(tone()), "good.wav"), make()], "round": 1}, format="multipart")
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_upload" and body["field"] == "files"
    assert message in body["errors"]["files"][0]
    assert ContextAudio.objects.count() == 0 and Context.objects.filter(round__task=task).count() == 0
    assert _stored(media) == []
