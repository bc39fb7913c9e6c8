"""A 429 or a 5xx is retried with backoff (honouring Retry-After) and the answer still comes; another 4xx is not retried
(a configuration error: ``endpoint_misconfigured``, 502, with the server's reason)."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.registry import get_predictor


@pytest.mark.django_db
def test_it_retries_429_and_503_until_the_endpoint_answers(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, max_retries=3)
    endpoint_server.fail_next = [429, 503]

    [output] = get_predictor(model).predict([{"text": "the food was great"}])

    assert len(endpoint_server.requests) == 3
    assert "label" in output and output["endpoint"]["cached"] is False


@pytest.mark.django_db
def test_it_gives_up_on_a_401_at_once_with_the_servers_reason(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, max_retries=3)
    endpoint_server.fail_next = [401]

    with pytest.raises(RuleError) as refused:
        get_predictor(model).predict([{"text": "the food was great"}])

    assert refused.value.code == "endpoint_misconfigured" and refused.value.status_code == 502
    assert "HTTP 401" in refused.value.message and "told to answer 401" in refused.value.message
    assert len(endpoint_server.requests) == 1
