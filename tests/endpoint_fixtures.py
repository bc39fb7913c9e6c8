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

    def make(task, *, name="tiny-gpt2-endpoint", url=None, loop_allowed=False, **fields):
        if loop_allowed:
            fields["consents"] = [*fields.get("consents", ()), "loop"]
        fields.setdefault("model_name", "tiny-gpt2")
        fields.setdefault("params", {"temperature": 0, "max_tokens": 8, "seed": 1})
        fields.setdefault("timeout_s", 10)
        model = create_endpoint_model(task=task, owner=fields.pop("owner", None), name=name,
                                      base_url=url or endpoint_server.url, **fields)
        reset_breaker(model)
        return model

    return make


@pytest.fixture(scope="session")
def _shared_transcription_server(tmp_path_factory):
    from tests.audio_support import build_tiny_ctc
    from tests.transcription_server import start_transcription_server

    server = start_transcription_server(build_tiny_ctc(tmp_path_factory.mktemp("tiny-ctc-server")))
    yield server
    server.stop()


@pytest.fixture
def transcription_server(_shared_transcription_server, settings):
    """The session's transcriptions API server (``tests/transcription_server.py``: a tiny random CTC model)
    reset, its port of 127.0.0.1 on the endpoint allow-list."""
    allow_local_server(settings, _shared_transcription_server.url)
    settings.DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S = 60
    _shared_transcription_server.reset()
    yield _shared_transcription_server
    _shared_transcription_server.reset()


@pytest.fixture
def speech_task_with_clips(owner, settings, tmp_path):
    """``(task, contexts)``: the built-in ``spoken-sentences`` task (``owner`` owns it) with four tone clips of
    0.3-1.05 s stored as round 1's contexts, under a media folder of this test."""
    from tasks.data.audio import ingest_audio
    from tasks.models import Context
    from tests.audio_support import audio_task, clip_file

    settings.MEDIA_ROOT = tmp_path / "media"
    task = audio_task(owner, "spoken-sentences")
    files = [clip_file(f"c{i}.wav", freq=200 + 90 * i, seconds=0.3 + 0.25 * i, rate=22050) for i in range(4)]
    ingest_audio(task=task, acting_user=owner, files=files, round_number=1)
    return task, list(Context.objects.filter(round__task=task).order_by("id"))


@pytest.fixture
def make_transcription_endpoint(transcription_server, db):
    """``make_transcription_endpoint(task, **fields)``: an endpoint model of ``task`` on ``transcription_server``'s
    transcriptions API (a fresh breaker: model ids are reused between tests)."""
    from tasks.loop.endpoints.breaker import reset_breaker
    from tasks.loop.endpoints.records import create_endpoint_model

    def make(task, *, name="ctc-endpoint", **fields):
        fields.setdefault("model_name", transcription_server.model_name)
        fields.setdefault("params", {"language": "en", "temperature": 0})
        fields.setdefault("timeout_s", 10)
        fields.setdefault("base_url", transcription_server.url)
        model = create_endpoint_model(task=task, owner=fields.pop("owner", task.owners.first()), name=name, **fields)
        reset_breaker(model)
        return model

    return make
