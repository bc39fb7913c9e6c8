"""Timeouts fit together: an endpoint's timeout may not exceed what the pages wait for a model
(``DYNABENCH_MODEL_WAIT_S``), and the refusal says so."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.records import create_endpoint_model


def test_a_timeout_longer_than_the_page_waits_is_refused(sentiment_task, endpoint_server, settings):
    settings.DYNABENCH_MODEL_WAIT_S = 120
    with pytest.raises(RuleError) as refused:
        create_endpoint_model(task=sentiment_task, owner=None, name="slow", base_url=endpoint_server.url,
                              model_name="tiny-gpt2", timeout_s=121)
    assert refused.value.field == "timeout_s" and "120" in refused.value.message and "DYNABENCH_MODEL_WAIT_S" in refused.value.message
    model = create_endpoint_model(task=sentiment_task, owner=None, name="patient", base_url=endpoint_server.url,
                                  model_name="tiny-gpt2", timeout_s=120)
    assert model.endpoint.timeout_s == 120

