"""What every endpoint module shares: the error codes, the answer and the error of a call, and the settings they read."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings



logger = logging.getLogger(__name__)


class EndpointCode:
    """Stable error codes of endpoint models (sent to API clients as ``code``)."""

    BAD_URL = "endpoint_bad_url"
    URL_NOT_ALLOWED = "endpoint_url_not_allowed"
    BAD_SETTINGS = "endpoint_bad_settings"
    BAD_KEY_ENV = "endpoint_bad_key_env"
    FAILED = "endpoint_failed"
    MISCONFIGURED = "endpoint_misconfigured"
    TIMED_OUT = "endpoint_timed_out"
    UNAVAILABLE = "endpoint_unavailable"
    BUDGET_SPENT = "endpoint_budget_spent"
    KIND_TAKES_NO_ENDPOINT = "endpoint_kind_unsupported"

PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop")

#: The parameters of the transcriptions API (``/v1/audio/transcriptions``), sent as form fields.
TRANSCRIPTION_PARAMS = ("language", "prompt", "temperature")

#: The content type of each audio format an ``input_audio`` part may name.
AUDIO_TYPES = {"flac": "audio/flac", "wav": "audio/wav"}

STORE_EVERY = 32

STORE_EVERY_S = 0.5

BACKOFF_BASE_S = 0.25

BACKOFF_MAX_S = 8.0

#: The most characters of an endpoint's own reason for refusing a request that a message carries.
REASON_CHARS = 500

#: The most bytes of a refusal's body read to find that reason.
REASON_BYTES = 16384


def audio_messages(flac: bytes) -> list[dict]:
    """The messages that carry one clip (FLAC bytes) to an endpoint: one user message whose content is
    OpenAI's ``input_audio`` part (``{"data": base64, "format": "flac"}``). The transcriptions API sends
    that clip as its multipart ``file`` (``calls.request_content``)."""
    import base64

    part = {"type": "input_audio", "input_audio": {"data": base64.b64encode(flac).decode("ascii"), "format": "flac"}}
    return [{"role": "user", "content": [part]}]


def setting(name, default):
    return getattr(settings, name, default)


@dataclasses.dataclass
class Answer:
    """One answer of an endpoint: its ``text``, the ``raw`` choice and usage as sent, the ``latency_ms``
    of the call (retries included), token counts (None where the endpoint reports none), and whether it
    came from the response cache (``cached``)."""

    text: str
    raw: dict
    latency_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached: bool = False


class ConfigErrorMessage(str):
    """The message of a configuration error (the endpoint refused the request with an HTTP 4xx other than
    408 or 429: a wrong model name, key, API or parameter). It is a ``str`` like every message, so a caller
    that only passes ``error.message`` on (``breaker.record_outcome(model, False, error.message)``) still
    tells the breaker that the endpoint answered and the settings are at fault: ``config_error`` is True."""

    config_error = True


class EndpointError(Exception):
    """A call failed after its retries; ``code`` (``EndpointCode``) and a message without the key.

    ``config_error``: the endpoint refused the request as misconfigured (``EndpointCode.MISCONFIGURED``;
    not retried, not counted by the circuit breaker, the task's owners told); ``message`` is then a
    ``ConfigErrorMessage`` and carries the server's own reason (at most ``REASON_CHARS`` characters)."""

    def __init__(self, code: str, message: str, *, config_error: bool = False):
        super().__init__(message)
        self.config_error = config_error
        self.code, self.message = code, (ConfigErrorMessage(message) if config_error else message)
