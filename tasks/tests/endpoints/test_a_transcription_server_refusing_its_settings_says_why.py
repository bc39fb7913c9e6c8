"""A transcriptions API that refuses the request (HTTP 400: a model it does not serve) is a configuration
error, as for chat endpoints: the call is not tried again, the circuit breaker does not count it, and the
message says the model is misconfigured with the server's own reason. A 503 is a passing failure, tried
again after its backoff, and the transcript still comes."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_state
from tasks.loop.registry import get_predictor


@pytest.mark.django_db
def test_a_400_names_the_servers_reason_and_is_not_retried(speech_task_with_clips, make_transcription_endpoint,
                                                          transcription_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 1
    task, contexts = speech_task_with_clips
    model = make_transcription_endpoint(task, model_name="whisper-large-v3", max_retries=3)

    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"clip": contexts[0].uid}])

    assert refused.value.code == "endpoint_misconfigured" and refused.value.status_code == 502
    assert "is misconfigured, so it cannot answer; its owners were told" in refused.value.message
    assert "(HTTP 400): Model 'whisper-large-v3' is not served here; this server serves 'tiny-ctc'." in refused.value.message
    assert len(transcription_server.requests) == 1
    assert not breaker_state(model)["open"]


@pytest.mark.django_db
def test_a_503_is_tried_again(speech_task_with_clips, make_transcription_endpoint, transcription_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 1
    task, contexts = speech_task_with_clips
    model = make_transcription_endpoint(task, max_retries=1)
    transcription_server.fail_next = [503]
    transcription_server.scripted = ["stop"]

    [output] = get_predictor(model).predict([{"clip": contexts[0].uid}])

    assert output["transcript"] == "stop" and len(transcription_server.requests) == 2
    assert not breaker_state(model)["open"]
