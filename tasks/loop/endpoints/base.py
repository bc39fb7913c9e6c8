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
    TIMED_OUT = "endpoint_timed_out"
    UNAVAILABLE = "endpoint_unavailable"
    BUDGET_SPENT = "endpoint_budget_spent"
    KIND_TAKES_NO_ENDPOINT = "endpoint_kind_unsupported"

PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop")

STORE_EVERY = 32

STORE_EVERY_S = 0.5

BACKOFF_BASE_S = 0.25

BACKOFF_MAX_S = 8.0


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


class EndpointError(Exception):
    """A call failed after its retries; ``code`` (``EndpointCode``) and a message without the key."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message
