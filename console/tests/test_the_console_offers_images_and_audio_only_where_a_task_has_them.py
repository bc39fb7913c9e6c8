"""The console's Images and Audio sections are offered only to a task with a context field of that
type; reached anyway, the page says there is nothing to upload instead of offering a form."""

from tests.audio_support import audio_task


def test_a_text_task_has_neither_tab_and_no_upload_form(client, owner, sentiment_task):
    client.force_login(owner)

    rounds = client.get(f"/tasks/{sentiment_task.code}/console/rounds/").content.decode()
    audio = client.get(f"/tasks/{sentiment_task.code}/console/audio/").content.decode()

    assert "/console/images/" not in rounds and "/console/audio/" not in rounds
    assert "data-no-audio-field" in audio and "data-audio-upload-form" not in audio


def test_an_audio_task_has_the_audio_tab_only(client, owner):
    task = audio_task(owner)
    client.force_login(owner)

    rounds = client.get(f"/tasks/{task.code}/console/rounds/").content.decode()
    images = client.get(f"/tasks/{task.code}/console/images/").content.decode()

    assert f"/tasks/{task.code}/console/audio/" in rounds and "/console/images/" not in rounds
    assert "data-no-image-field" in images and "data-image-upload-form" not in images
