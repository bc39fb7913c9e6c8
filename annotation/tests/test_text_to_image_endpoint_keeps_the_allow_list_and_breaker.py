"""An image generator behind an endpoint goes through the endpoint machinery: a host taken off the
allow-list is refused before any call, and after repeated failures the circuit breaker refuses at
once without calling the server, saying when it tries again; a 404 (a wrong path) is a configuration
error that leaves the breaker closed; nothing is stored either way."""

import socket

import pytest

from annotation import t2i
from dynabench.errors import RuleError
from tasks.loop.endpoints.breaker import breaker_state
from tasks.models import ContextImage
from tests.endpoint_fixtures import allow_local_server
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def test_allow_list_checked_before_each_call(owner, annotator, image_server, settings):
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = []
    state = t2i.start(user=annotator, task=task)
    with pytest.raises(RuleError, match="not on the platform's endpoint allow-list"):
        t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit")
    assert image_server.requests == [] and not ContextImage.objects.filter(task=task).exists()


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_wrong_path_is_a_configuration_error_that_leaves_the_breaker_closed(owner, annotator, image_server):
    task = nibbler_task(owner)
    add_context(task)
    model = endpoint_generator(task, image_server.url + "/wrong-prefix")  # the server answers 404 there
    state = t2i.start(user=annotator, task=task)
    for _ in range(3):
        with pytest.raises(RuleError, match=r"refused the request as misconfigured \(HTTP 404\)"):
            t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit")
    assert not breaker_state(model)["open"] and len(image_server.requests) == 3


def test_the_breaker_opens_after_failures_and_refuses_without_calling(owner, annotator, image_server, settings):
    settings.DYNABENCH_ENDPOINT_BREAKER_FAILURES = 2
    settings.DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S = 60
    task = nibbler_task(owner)
    add_context(task)
    closed = f"http://127.0.0.1:{_closed_port()}"
    allow_local_server(settings, closed)
    endpoint_generator(task, closed)  # nothing listens there: the connection fails
    state = t2i.start(user=annotator, task=task)
    for _ in range(2):
        with pytest.raises(RuleError, match="connection to the endpoint failed"):
            t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit")
    calls = len(image_server.requests)
    with pytest.raises(RuleError, match="circuit breaker is open") as refused:
        t2i.generate(user=annotator, task=task, state=state, prompt="a bowl of fruit")
    assert refused.value.status_code == 503 and "try again in" in refused.value.message
    assert len(image_server.requests) == calls and not ContextImage.objects.filter(task=task).exists()
