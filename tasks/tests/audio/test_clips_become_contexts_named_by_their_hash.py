"""Uploaded clips (WAV, FLAC, OGG Vorbis, Opus and MP3, one by one and in a zip) become contexts of the
round: stored once as 16-bit FLAC under the sha256 of those bytes, without the tags of the upload,
with a 16 kHz mono copy for models; uploading them again adds nothing; only owners may upload."""

import io

import numpy as np
import pytest
import soundfile
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from dynabench.errors import NotAllowed
from tasks.data.audio import ingest_audio
from tasks.data.audio_files import model_name, read_model_samples, stored_name
from tasks.models import Context, ContextAudio
from tests.audio_support import audio_task, clip_file, encode, sweep, tone, zip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def tagged_wav() -> bytes:
    out = io.BytesIO()
    with soundfile.SoundFile(out, "w", 44100, 2, format="WAV", subtype="PCM_16") as clip:
        clip.title = "label: stop"
        clip.artist = "speaker 17"
        clip.write(tone(880, rate=44100, channels=2))
    return out.getvalue()


def test_clips_become_contexts_named_by_their_hash(owner):
    task = audio_task(owner)
    files = [
        clip_file("yes-1.wav"), clip_file("no.flac", freq=330), clip_file("up.ogg", freq=550),
        clip_file("down.opus", freq=660), SimpleUploadedFile("secret-stop.wav", tagged_wav()),
        zip_file({"clips/left.mp3": encode(sweep(), "mp3"), "clips/right.wav": encode(tone(220)), "__MACOSX/._x.wav": b"junk"}),
    ]
    result = ingest_audio(task=task, acting_user=owner, files=files, round_number=1)
    assert (result.added, result.unchanged) == (7, 0)
    store = storages["default"]
    formats = set()
    for record in ContextAudio.objects.filter(task=task):
        data = store.open(stored_name(record.sha256)).read()
        assert __import__("hashlib").sha256(data).hexdigest() == record.sha256
        info = soundfile.info(io.BytesIO(data))
        assert info.format == "FLAC" and info.subtype == "PCM_16"
        assert (info.samplerate, info.channels) == (record.sample_rate, record.channels)
        model = soundfile.info(io.BytesIO(store.open(model_name(record.sha256)).read()))
        assert (model.samplerate, model.channels) == (16000, 1)
        assert read_model_samples(record.sha256).shape == (round(record.duration_s * 16000),)
        formats.add(record.source_format)
        context = Context.objects.get(round__task=task, uid=record.sha256)
        assert context.data == {"clip": record.sha256}
    assert formats == {"WAV", "FLAC", "OGG", "MP3"}
    tagged = ContextAudio.objects.get(original_name="secret-stop.wav")
    assert (tagged.sample_rate, tagged.channels) == (44100, 2)
    cleaned = soundfile.SoundFile(io.BytesIO(store.open(stored_name(tagged.sha256)).read()))
    assert not cleaned.title and not cleaned.artist
    assert "secret" not in tagged.sha256 and store.exists(stored_name(tagged.sha256))

    again = ingest_audio(task=task, acting_user=owner, files=[clip_file("copy-of-yes.wav")], round_number=1)
    assert (again.added, again.unchanged) == (0, 1)
    assert ContextAudio.objects.filter(task=task).count() == 7


def test_the_model_copy_keeps_a_tone_at_16_khz_mono(owner):
    task = audio_task(owner)
    ingest_audio(task=task, acting_user=owner, round_number=1,
                 files=[SimpleUploadedFile("a.wav", encode(tone(1000, rate=44100, channels=2), rate=44100))])
    samples = read_model_samples(ContextAudio.objects.get(task=task).sha256)
    expected = 0.3 * np.sin(2 * np.pi * 1000 * np.arange(samples.size) / 16000)
    assert np.abs(samples[200:-200] - expected[200:-200]).max() < 1e-3  # 16-bit storage


def test_only_owners_upload_clips(owner, annotator):
    task = audio_task(owner)
    with pytest.raises(NotAllowed):
        ingest_audio(task=task, acting_user=annotator, files=[clip_file()], round_number=1)
    assert ContextAudio.objects.count() == 0
