"""The console's *Audio* page: an owner uploads clips, sees each with an ``<audio controls>`` player;
a bad clip is refused with a 400 that names it and stores nothing; an outsider may not open the page."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tasks.models import ContextAudio
from tests.audio_support import audio_task, clip_file


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_owners_upload_audio_on_the_console_and_play_it(client, owner, outsider):
    task = audio_task(owner)
    client.force_login(owner)
    url = f"/tasks/{task.code}/console/audio/"
    answer = client.post(url, {"round": 1, "files": [clip_file("yes.wav"), clip_file("no.ogg", freq=300)]}, follow=True)
    assert answer.status_code == 200
    page = answer.content.decode()
    assert "2 audio context(s) added" in page
    for record in ContextAudio.objects.filter(task=task):
        assert f'<audio controls preload="none" src="/tasks/{task.code}/audio/{record.sha256}"' in page
    refused = client.post(url, {"round": 1, "files": [SimpleUploadedFile("bad.mp3", b"not audio at all" * 10)]})
    assert refused.status_code == 400 and "&#x27;bad.mp3&#x27; is not audio" in refused.content.decode()
    assert ContextAudio.objects.count() == 2
    client.force_login(outsider)
    assert client.get(url).status_code in (403, 404)
