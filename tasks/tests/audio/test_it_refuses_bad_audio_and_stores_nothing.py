"""Bad clips are refused with a message that says what is wrong, and nothing is stored (no file in
the storage, no clip record, no context): text renamed ``.wav``, truncated WAV, FLAC and MP3 files,
headers with an absurd sample rate, channel count or length, a zip bomb, a zip path outside its
folder, a clip over the limit, a task over its quota."""

import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from dynabench.errors import FieldErrors
from tasks.data.audio import ingest_audio
from tasks.models import Context, ContextAudio
from tests.audio_support import audio_task, clip_file, encode, half, noise, tone, wav, zip_file


def bomb() -> SimpleUploadedFile:
    """A zip whose one member is 3 MB of zeros (about 3 KB packed)."""
    return zip_file({"bomb.wav": wav(payload=b"\x00" * 3_000_000)})


CASES = [
    ("text renamed .wav", lambda: [SimpleUploadedFile("yes.wav", b"this is not audio, only text\n" * 40)],
     "is not audio that can be read as WAV, FLAC, OGG (Vorbis or Opus) or MP3"),
    ("truncated WAV", lambda: [SimpleUploadedFile("cut.wav", half(encode(tone(seconds=2))))], "'cut.wav' is truncated"),
    ("truncated FLAC", lambda: [SimpleUploadedFile("cut.flac", half(encode(noise(seconds=2), "flac")))], "damaged or truncated"),
    ("truncated MP3", lambda: [SimpleUploadedFile("cut.mp3", half(encode(tone(seconds=2), "mp3")))], "is truncated"),
    ("a sample rate of 1 Hz", lambda: [SimpleUploadedFile("slow.wav", wav(rate=1))], "a sample rate of 1 Hz"),
    ("a sample rate of 4 MHz", lambda: [SimpleUploadedFile("fast.wav", wav(rate=4_000_000))], "the limits are 8,000 to 96,000 Hz"),
    ("nine channels", lambda: [SimpleUploadedFile("many.wav", wav(channels=9, payload=b"\x00" * 18 * 100))], "has 9 channels"),
    ("a header declaring 18 hours in 3 KB", lambda: [SimpleUploadedFile("long.wav", wav(data_size=0x7FFFFFF0))],
     "its header declares more audio than the file holds"),
    ("a clip of 61 s", lambda: [clip_file("long.flac", seconds=61, rate=8000)], "lasts 61.0 s; the limit is 60 s"),
    ("a zip bomb", lambda: [bomb()], "unpacks to more than 1,000,000 bytes"),
    ("a zip with a path outside its folder", lambda: [zip_file({"ok.wav": encode(tone()), "../../evil.wav": encode(tone(300))})],
     "leads outside the zip's folder"),
    ("a zip holding a text file", lambda: [zip_file({"a.wav": encode(tone()), "labels.txt": b"a,yes"})], "is not an audio clip"),
    ("good files then a bad one", lambda: [clip_file("a.wav"), clip_file("b.flac", freq=300),
                                           SimpleUploadedFile("c.wav", b"RIFF" + b"\x00" * 40)], "'c.wav' is not audio"),
    ("a PNG renamed .mp3", lambda: [SimpleUploadedFile("x.mp3", b"\x89PNG\r\n\x1a\n" + zlib.compress(b"\x00" * 500))],
     "is not audio"),
]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.AUDIO_ZIP_MAX_BYTES = 1_000_000
    return settings.MEDIA_ROOT


def _refused(owner, media, files):
    task = audio_task(owner)
    contexts_before = Context.objects.count()
    with pytest.raises(FieldErrors) as refused:
        ingest_audio(task=task, acting_user=owner, files=files, round_number=1)
    assert ContextAudio.objects.count() == 0
    assert Context.objects.count() == contexts_before
    assert [p for p in media.rglob("*") if p.is_file()] == []
    return refused.value.errors["files"][0]


@pytest.mark.parametrize("what,files,message", CASES, ids=[c[0] for c in CASES])
def test_it_refuses_bad_audio_and_stores_nothing(owner, media, what, files, message):
    assert message in _refused(owner, media, files())


def test_a_task_over_its_quota_is_refused(owner, media, settings):
    settings.AUDIO_TASK_QUOTA_SECONDS = 1.5
    message = _refused(owner, media, [clip_file("a.wav"), clip_file("b.wav", freq=300)])
    assert "would pass its quota" in message and "AUDIO_TASK_QUOTA_SECONDS" in message
