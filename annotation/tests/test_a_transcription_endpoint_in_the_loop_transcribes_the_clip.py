"""A speech recognition task with a model behind an OpenAI-compatible transcriptions API in the loop: an
annotator's example (through the API, whose view awaits the endpoint without a thread) gets the
endpoint's transcript of the context's clip and the server's WER verdict against the annotator's
transcript. The server (a tiny random CTC model) receives the stored 16 kHz mono copy as a FLAC file in a
multipart request with the endpoint's model name and parameters, never the transcript; the call is
charged against the round's budget, and once the budget is spent the next example is refused."""

import pytest

from annotation.models import Example
from tasks.metrics.speech import utterance_wer
from tests.api.conftest import client_for


@pytest.fixture
def endpoint_in_loop(speech_task_with_clips, make_transcription_endpoint):
    task, contexts = speech_task_with_clips
    model = make_transcription_endpoint(task, params={"language": "en", "prompt": "Names: Ada.", "temperature": 0})
    round_ = task.rounds.get(number=1)
    round_.target_models.add(model)
    round_.endpoint_call_budget = 2
    round_.save(update_fields=["endpoint_call_budget"])
    return task, contexts, model


def _post(annotator, context, transcript):
    return client_for(annotator).post(
        "/api/v1/examples", {"context": context.pk, "input": {}, "target": {"transcripts": [transcript]}}, format="json",
    )


def test_the_example_holds_the_endpoints_transcript_and_its_verdict(annotator, endpoint_in_loop, transcription_server):
    task, contexts, model = endpoint_in_loop
    response = _post(annotator, contexts[1], "turn on two lights")
    assert response.status_code == 201, response.content

    example = Example.objects.get(pk=response.json()["id"])
    [request] = transcription_server.requests
    [answered] = transcription_server.answered
    assert example.model_id == model.pk and example.model_output["transcript"] == answered.strip()
    assert example.model_wrong == (utterance_wer(answered, ["turn on two lights"]) > 0.3)
    assert example.model_output["endpoint"]["api"] == "transcriptions" and not example.model_output["endpoint"]["cached"]
    assert request["path"] == "/v1/audio/transcriptions"
    assert request["fields"] == {"model": "tiny-ctc", "language": "en", "prompt": "Names: Ada.", "temperature": "0.0",
                                 "response_format": "json"}
    assert (request["filename"], request["content_type"], request["rate"], request["channels"]) == ("clip.flac", "audio/flac", 16000, 1)
    assert request["frames"] == 16000 * 0.55  # the 0.55 s clip, stored at 22.05 kHz, sent as its 16 kHz copy

    transcription_server.scripted = ["Turn on 2 lights!"]
    fooled_not = _post(annotator, contexts[0], "turn on two lights")
    assert fooled_not.status_code == 201 and fooled_not.json()["model_wrong"] is False

    refused = _post(annotator, contexts[2], "turn on two lights")
    assert refused.status_code == 409 and "used its budget" in refused.json()["detail"]
    assert Example.objects.count() == 2 and len(transcription_server.requests) == 2
