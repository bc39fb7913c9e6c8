"""An endpoint that answers a 4xx other than 408/429 refuses these settings: the call is not tried again,
the circuit breaker does not count it, and the message carries the server's own reason (OpenAI's
``{"error": {"message"}}`` or plain text), bounded and without the key. A 408 is a passing failure, tried again."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import REASON_CHARS
from tasks.loop.endpoints.breaker import breaker_state
from tasks.loop.registry import get_predictor

KEY = "sk-never-in-a-message-7f3a"


@pytest.mark.django_db
def test_a_400_is_not_retried_and_does_not_open_the_breaker(sentiment_task, make_endpoint_model, endpoint_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 2
    model = make_endpoint_model(sentiment_task, model_name="tiny", max_retries=3)
    endpoint_server.pinned = True

    for text in ("one", "two", "three"):
        with pytest.raises(RuleError) as refused:
            get_predictor(model).predict([{"text": text}])
        assert refused.value.code == "endpoint_misconfigured" and refused.value.status_code == 502
        assert "Server is pinned to 'tiny-gpt2'; requested 'tiny'" in refused.value.message
        assert "misconfigured" in refused.value.message and "owners were told" in refused.value.message

    assert len(endpoint_server.requests) == 3  # one try each
    assert breaker_state(model) == {"open": False, "seconds": 0.0, "failures": 0, "reason": ""}


@pytest.mark.django_db
def test_a_plain_text_reason_is_cut_to_its_bound(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task)
    endpoint_server.fail_next = [(422, "the prompt is too long " * 400)]

    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"text": "one"}])

    assert "HTTP 422" in refused.value.message and "the prompt is too long" in refused.value.message
    reason = refused.value.message.split("HTTP 422): ", 1)[1]
    assert len(reason) == REASON_CHARS and reason.endswith("…")


@pytest.mark.django_db
def test_the_key_never_appears_in_the_reason(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, api_key=KEY)
    endpoint_server.fail_next = [(401, {"error": {"message": f"Incorrect API key provided: {KEY}."}})]

    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"text": "one"}])

    assert KEY not in refused.value.message and "Incorrect API key provided: [key]." in refused.value.message


@pytest.mark.django_db
def test_a_408_is_tried_again(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, max_retries=1)
    endpoint_server.fail_next = [(408, {"error": {"message": "request timeout"}}, {"Retry-After": "0"})]

    [output] = get_predictor(model).predict([{"text": "one"}])

    assert len(endpoint_server.requests) == 2 and "label" in output
