"""Fixtures for models behind endpoints: the tiny causal LM, one real OpenAI-compatible server per
test session (``tests/endpoint_server.py``), and endpoint model records pointing at it."""

from urllib.parse import urlsplit

import pytest

from tests.endpoint_server import build_tiny_causal_lm, start_server


def allow_local_server(settings, url: str) -> None:
    """Add ``127.0.0.1/32:PORT`` (the port of ``url``, a server on this machine) to the endpoint allow-list,
    keeping the entries already there: an entry names its port, so each test server is listed on its own."""
    entry = f"127.0.0.1/32:{urlsplit(url).port}"
    current = list(getattr(settings, "DYNABENCH_ENDPOINT_ALLOWLIST", []) or [])
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = current if entry in current else [*current, entry]


@pytest.fixture(scope="session")
def tiny_causal_lm_dir(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def _shared_endpoint_server(tiny_causal_lm_dir):
    server = start_server(tiny_causal_lm_dir)
    yield server
    server.stop()


@pytest.fixture
def endpoint_server(_shared_endpoint_server, settings):
    """The session's server with its behaviours reset, and its port of 127.0.0.1 on the endpoint allow-list."""
    allow_local_server(settings, _shared_endpoint_server.url)
    settings.DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S = 60
    _shared_endpoint_server.reset()
    yield _shared_endpoint_server
    _shared_endpoint_server.reset()


@pytest.fixture
def make_endpoint_model(endpoint_server, db):
    """``make_endpoint_model(task, **fields)``: an endpoint model of ``task`` served by ``endpoint_server``
    (a fresh breaker: model ids are reused between tests)."""
    from tasks.loop.endpoints.breaker import reset_breaker
    from tasks.loop.endpoints.records import create_endpoint_model

    def make(task, *, name="tiny-gpt2-endpoint", url=None, **fields):
        fields.setdefault("model_name", "tiny-gpt2")
        fields.setdefault("params", {"temperature": 0, "max_tokens": 8, "seed": 1})
        fields.setdefault("timeout_s", 10)
        model = create_endpoint_model(task=task, owner=fields.pop("owner", None), name=name,
                                      base_url=url or endpoint_server.url, **fields)
        reset_breaker(model)
        return model

    return make
