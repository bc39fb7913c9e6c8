"""The write page's own-clip upload refuses, storing nothing (no file, no clip record, no context):
a file that is not audio, a truncated one or one with an absurd header (400 naming the problem, the
current workspace shown again), no file (400); someone who is not an annotator of the task (403); a
task whose config does not take annotators' clips (400)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tasks.access import ban_user
from tasks.models import Context, ContextAudio
from tests.audio_support import audio_task, clip_file, encode, half, tone, wav


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _nothing_stored(task, media, contexts_before):
    assert not ContextAudio.objects.exists()
    assert Context.objects.filter(round__task=task).count() == contexts_before
    assert not any(media.rglob("*.flac"))


@pytest.mark.parametrize("upload, message", [
    (lambda: SimpleUploadedFile("notes.wav", b"this is not audio, only text\n" * 40),
     "&#x27;notes.wav&#x27; is not audio that can be read as WAV, FLAC, OGG (Vorbis or Opus) or MP3"),
    (lambda: SimpleUploadedFile("recording.wav", half(encode(tone(seconds=2)))), "&#x27;recording.wav&#x27; is truncated"),
    (lambda: SimpleUploadedFile("fast.wav", wav(rate=4_000_000)), "has a sample rate of 4,000,000 Hz; the limits are 8,000 to 96,000 Hz"),
    (lambda: SimpleUploadedFile("long.wav", wav(data_size=0x7FFFFFF0)), "its header declares more audio than the file holds"),
    (lambda: None, "Record a clip or choose an audio file"),
])
def test_a_bad_clip_gets_a_400_saying_why_and_nothing_is_stored(client, owner, annotator, media, upload, message):
    task = audio_task(owner)
    shown = Context.objects.create(round=task.rounds.get(number=1), uid="owner-clip", data={"clip": "0" * 64})
    client.force_login(annotator)
    data = {"current": shown.pk}
    if upload() is not None:
        data["clip"] = upload()
    response = client.post(reverse("annotation:upload_audio", args=[task.code]), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    body = response.content.decode()
    assert message in body and 'id="workspace"' in body and f'value="{shown.pk}"' in body
    _nothing_stored(task, media, 1)


def test_only_annotators_of_a_task_that_takes_clips_may_upload_one(client, owner, annotator, outsider, media):
    task = audio_task(owner)
    url = reverse("annotation:upload_audio", args=[task.code])
    client.force_login(outsider)
    refused = client.post(url, {"clip": clip_file("a.wav")}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 403 and "Only annotators of Spoken commands may add clips to it." in refused.content.decode()
    client.force_login(annotator)
    ban_user(task=task, user=annotator, acting_user=owner)
    assert client.post(url, {"clip": clip_file("a.wav")}, HTTP_HX_REQUEST="true").status_code == 403
    _nothing_stored(task, media, 0)


def test_a_task_that_does_not_take_annotators_clips_refuses_them(client, owner, annotator, media):
    task = audio_task(owner)
    task.config = {k: v for k, v in task.config.items() if k != "annotator_audio_uploads"}
    task.save()
    client.force_login(annotator)
    response = client.post(reverse("annotation:upload_audio", args=[task.code]), {"clip": clip_file("a.wav")})
    assert response.status_code == 400 and "Spoken commands does not take clips from annotators." in response.content.decode()
    assert 'data-audio-upload' not in client.get(reverse("annotation:create", args=[task.code])).content.decode()
    _nothing_stored(task, media, 0)
