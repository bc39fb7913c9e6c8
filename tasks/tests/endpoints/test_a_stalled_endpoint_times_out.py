"""A stalled endpoint times out after the record's timeout with a readable reason (no retry of a read timeout)."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.registry import get_predictor


@pytest.mark.django_db
def test_a_stalled_endpoint_times_out_with_a_reason(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task, timeout_s=1)
    endpoint_server.stall()
    try:
        with pytest.raises(RuleError) as refused:
            get_predictor(model).predict([{"text": "the food was great"}])
    finally:
        endpoint_server.release()

    assert refused.value.code == "endpoint_timed_out"
    assert "did not answer within 1 s" in refused.value.message
    assert len(endpoint_server.requests) == 1
