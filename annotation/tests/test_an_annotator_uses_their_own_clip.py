"""An annotator of an audio task that takes annotators' clips uploads one from the write page (the
page's recording arrives the same way, as a WAV file): it is checked and cleaned as an owner's clip,
becomes a context of the open round tagged ``annotator-upload``, and the workspace plays it; the
model in the loop then answers on it like on any context."""

import pytest
from django.urls import reverse

from annotation.services import create_example
from annotation.tests.conftest import put_in_loop
from tasks.models import Context, ContextAudio
from tests.audio_support import audio_task, build_tiny_ctc, clip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_an_annotator_uses_their_own_clip(client, owner, annotator, tmp_path):
    task = audio_task(owner, "spoken-sentences")
    put_in_loop(task, build_tiny_ctc(tmp_path / "ctc"), "tiny-ctc")
    client.force_login(annotator)
    response = client.post(reverse("annotation:upload_audio", args=[task.code]),
                           {"clip": clip_file("my-voice-anna.wav", seconds=1.5)}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    clip = ContextAudio.objects.get(task=task)
    assert (clip.uploaded_by, clip.source_format, clip.duration_s) == (annotator, "WAV", 1.5)
    context = Context.objects.get(round__task=task, uid=clip.sha256)
    assert (context.tag, context.data) == ("annotator-upload", {"clip": clip.sha256})
    body = response.content.decode()
    assert f'data-context-audio="{clip.sha256}"' in body and "my-voice-anna" not in body
    assert f'<audio controls preload="metadata" src="/tasks/{task.code}/audio/{clip.sha256}"' in body
    assert 'name="transcript"' in body  # the annotator now writes what the clip says
    assert "Your clip is the context now" in body  # said, not only shown
    assert client.get(f"/tasks/{task.code}/audio/{clip.sha256}").status_code == 200

    again = client.post(reverse("annotation:upload_audio", args=[task.code]), {"clip": clip_file("again.wav", seconds=1.5)})
    assert again.status_code == 200 and Context.objects.filter(round__task=task).count() == 1  # the same clip: one context

    example = create_example(user=annotator, context=context, input={}, target={"transcripts": ["my own words"]})
    assert example.input["clip"] == clip.sha256 and isinstance(example.model_output["transcript"], str)
