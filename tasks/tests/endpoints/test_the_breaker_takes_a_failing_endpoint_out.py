"""After repeated failed calls the circuit breaker opens (in the shared cache): further calls fail at once
without reaching the endpoint, until the cool-down passes; a success closes it again."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_state, reset_breaker
from tasks.loop.registry import get_predictor


@pytest.mark.django_db
def test_the_breaker_opens_after_repeated_failures_and_stops_calls(sentiment_task, make_endpoint_model, endpoint_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 2
    model = make_endpoint_model(sentiment_task, max_retries=0)
    endpoint_server.fail_next = [500, 500]
    for text in ("one", "two"):
        with pytest.raises(RuleError):
            get_predictor(model).predict([{"text": text}])
    assert breaker_state(model)["open"] is True
    asked = len(endpoint_server.requests)

    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"text": "three"}])

    assert refused.value.code == "endpoint_unavailable" and refused.value.status_code == 503
    assert len(endpoint_server.requests) == asked

    reset_breaker(model)
    get_predictor(model).predict([{"text": "three"}])
    assert breaker_state(model) == {"open": False, "seconds": 0.0, "failures": 0, "reason": ""}
