"""``POST /api/v1/models/endpoint`` for a speech recognition task: without ``api`` the endpoint speaks the
kind's API (transcriptions) and keeps its parameters (language, prompt, temperature); a chat API, a chat
parameter or a malformed language is refused with a 400 that says what to fix, and nothing is stored.
``PATCH .../endpoint`` checks the same rules."""

import pytest

from tasks.models import Endpoint, MLModel
from tests.api.conftest import client_for
from tests.audio_support import audio_task


@pytest.fixture
def speech_task(owner):
    return audio_task(owner, "spoken-sentences")


def _body(task, server, **changes):
    return {"task": task.code, "name": "ctc", "base_url": server.url, "model_name": "tiny-ctc", "params": {"language": "en"},
            **changes}


def test_the_kinds_api_is_the_default_and_wrong_settings_are_refused(researcher, speech_task, transcription_server):
    api = client_for(researcher)

    refusals = [
        api.post("/api/v1/models/endpoint", _body(speech_task, transcription_server, api="chat"), format="json"),
        api.post("/api/v1/models/endpoint", _body(speech_task, transcription_server, params={"max_tokens": 8}), format="json"),
        api.post("/api/v1/models/endpoint", _body(speech_task, transcription_server, params={"language": "English"}), format="json"),
    ]
    created = api.post("/api/v1/models/endpoint", _body(speech_task, transcription_server), format="json")

    assert [r.status_code for r in refusals] == [400, 400, 400]
    texts = [r.content.decode() for r in refusals]
    assert "use the transcriptions API" in texts[0]
    assert "Unknown parameters ['max_tokens'] for the transcriptions API; allowed: language, prompt, temperature" in texts[1]
    assert "ISO 639-1" in texts[2]
    assert created.status_code == 201, created.content
    endpoint = Endpoint.objects.get(model_id=created.json()["id"])
    assert endpoint.api == "transcriptions" and endpoint.params == {"language": "en"}
    assert MLModel.objects.filter(task=speech_task, kind="endpoint").count() == 1

    changed = api.patch(f"/api/v1/models/{endpoint.model_id}/endpoint", {"params": {"language": "fr", "temperature": 1.5}},
                        format="json")
    assert changed.status_code == 400 and "'temperature' lies between 0 and 1" in changed.content.decode()
    assert Endpoint.objects.get(pk=endpoint.pk).params == {"language": "en"}
