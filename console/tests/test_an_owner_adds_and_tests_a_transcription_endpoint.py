"""On a speech recognition task's console the add-endpoint form offers only the transcriptions API and its
parameters (language and a prompt; no chat prompt, no token limit); the owner adds a model behind a
transcription server with it (a chat API posted anyway is refused on the form, nothing stored), and *Test
connection* sends one second of a tone as a 16 kHz FLAC file and shows the server's transcript, or the
server's own reason when it refuses the settings. A task of a kind that takes no endpoint shows no form."""

import html

from tasks.models import Endpoint, MLModel
from tests.audio_support import audio_task


def _form(server, **changes):
    data = {"name": "ctc via vLLM", "base_url": server.url + "/v1", "model_name": "tiny-ctc", "api": "transcriptions",
            "language": "en", "transcription_prompt": "Ada Lovelace", "temperature": 0, "timeout_s": 10, "max_retries": 1,
            "max_concurrency": 2, "api_key": "", "api_key_env": ""}
    return {**data, **changes}


def test_the_form_adds_a_transcription_endpoint_and_the_test_shows_its_transcript(client, owner, speech_task_with_clips,
                                                                                  transcription_server):
    task, _ = speech_task_with_clips
    client.force_login(owner)

    page = client.get(f"/tasks/{task.code}/console/rounds/").content.decode()
    chat = client.post(f"/tasks/{task.code}/console/endpoints/add", _form(transcription_server, api="chat"))
    added = client.post(f"/tasks/{task.code}/console/endpoints/add", _form(transcription_server))

    assert 'value="transcriptions"' in page and 'value="chat"' not in page and "/v1/audio/transcriptions" in page
    assert 'name="language"' in page and 'name="max_tokens"' not in page and 'name="system"' not in page
    assert chat.status_code == 400 and "Select a valid choice" in chat.content.decode()
    assert added.status_code == 302, added.content.decode()[-3000:]
    endpoint = Endpoint.objects.get(model__task=task)
    assert endpoint.api == "transcriptions" and endpoint.params == {"language": "en", "prompt": "Ada Lovelace", "temperature": 0.0}

    url = f"/tasks/{task.code}/console/endpoints/{endpoint.model_id}/test"
    transcription_server.scripted = ["a quiet tone"]
    answered = client.post(url, HTTP_HX_REQUEST="true").content.decode()
    Endpoint.objects.filter(pk=endpoint.pk).update(model_name="whisper-1")
    failed = client.post(url, HTTP_HX_REQUEST="true").content.decode()

    assert "data-connection-ok" in answered and "a quiet tone" in answered
    first = transcription_server.requests[0]
    assert (first["path"], first["rate"], first["channels"], first["frames"]) == ("/v1/audio/transcriptions", 16000, 1, 16000)
    assert first["fields"]["prompt"] == "Ada Lovelace"
    assert "data-connection-failed" in failed
    assert "Model 'whisper-1' is not served here; this server serves 'tiny-ctc'." in html.unescape(failed)
    assert MLModel.objects.filter(task=task, kind="endpoint").count() == 1


def test_a_kind_without_endpoints_shows_no_form(client, owner):
    task = audio_task(owner)  # spoken commands: audio classification takes no endpoint model
    client.force_login(owner)

    page = client.get(f"/tasks/{task.code}/console/rounds/").content.decode()

    assert "data-add-endpoint" not in page
