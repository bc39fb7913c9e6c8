"""An assistant that cannot be reached answers *Suggest* with one plain message (503): why, then what
to do, with no doubled full stop after the endpoint's own reason."""

import socket

import pytest

from annotation.models import RoundAssistant
from annotation.tests.helpers import HTMX, token_of
from tests.endpoint_fixtures import allow_local_server


def _closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def unreachable(nli_task, nli_model, make_endpoint_model, settings):
    url = f"http://127.0.0.1:{_closed_port()}/v1"  # nothing listens there
    allow_local_server(settings, url)
    model = make_endpoint_model(nli_task, name="assistant", url=url, max_retries=0, timeout_s=2)
    return RoundAssistant.objects.create(round=nli_task.current_round(), model=model)


def test_the_message_reads_as_one_sentence(client, annotator, nli_task, unreachable):
    client.force_login(annotator)
    page = client.get(f"/tasks/{nli_task.code}/write/")

    answer = client.post(f"/tasks/{nli_task.code}/write/suggest", {"token": token_of(page)}, **HTMX)

    text = answer.content.decode()
    assert answer.status_code == 503 and "The assistant (assistant) did not answer" in text
    assert ".." not in text.split("did not answer", 1)[1].split("write the example yourself")[0]
