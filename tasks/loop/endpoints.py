"""Models behind endpoints: an ``MLModel`` of kind ``endpoint`` answers through an OpenAI-compatible API.

One client (``httpx``) covers vLLM, TGI's messages API, Ollama, llama.cpp's server,
``transformers serve`` and the hosted providers that speak ``/v1/chat/completions`` or
``/v1/completions``. The registry (``tasks.loop.registry.get_predictor``) hands back an
``EndpointPredictor`` for such a record, so the model in the loop and the evaluation jobs use it
like a local model. What a task kind sends and how the answer becomes its output is the kind's
(``TaskKindSpec.endpoint_messages`` / ``endpoint_answer``).

Safety (server-side request forgery). ``check_url`` accepts only ``http``/``https`` URLs without
credentials whose host is on the admin's allow-list ``settings.DYNABENCH_ENDPOINT_ALLOWLIST``
(host names, ``*.suffix`` patterns, or networks such as ``127.0.0.1/32``): a host name must match a
name entry (an unlisted name is refused before any DNS look-up), an address must lie in a network
entry. Every address the host resolves to is checked: link-local (cloud metadata ``169.254.169.254``), multicast, unspecified
and reserved addresses are always refused; the platform's own networks
(``settings.DYNABENCH_ENDPOINT_BLOCKED_NETWORKS``, loopback and private ranges by default) only
pass when a *network* entry of the allow-list covers the address (a listed name that resolves
inside them is refused). The check runs when the record is saved and again before each call
(a name that later resolves elsewhere is refused then); redirects are never followed; answers
are read up to ``settings.DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES`` (1 MiB by default).

Keys. ``set_api_key`` encrypts a key (Fernet, key derived from ``SECRET_KEY``) into the record;
``api_key_env`` names an environment variable instead (it must start with
``settings.DYNABENCH_ENDPOINT_KEY_ENV_PREFIX``, ``DYNABENCH_ENDPOINT_KEY_`` by default, so a record
can never send another of the server's secrets). The key goes only into the ``Authorization``
header; no error message, log line, page, API answer or export carries it.

Calls. Each call has the record's timeout (connect and read, ``timeout_s``), is retried up to
``max_retries`` times after a 429, a 5xx or a lost connection with exponential backoff and
jitter (0.25 s · 2^attempt, at most 8 s; a ``Retry-After`` of at most 8 s is honoured); a read
timeout is not retried (a stalled endpoint fails after one timeout). At most ``max_concurrency``
calls per endpoint are in flight in one process. A circuit breaker in the shared cache (Redis:
every web and worker process sees it) opens after ``DYNABENCH_ENDPOINT_BREAKER_FAILURES``
consecutive failed calls (5) for ``DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S`` (30 s): meanwhile calls
fail at once with ``endpoint_unavailable``; after the cool-down the next call tries again (one
success closes it, one failure opens it again). Each process reads the shared state at most once a
second (``DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S``) and its own outcomes at once, so a call pays no
cache round trip.

Cache. Every answer is stored in ``EndpointResponse`` under the sha256 of the API, the model name,
the parameters and the messages, so an evaluation that resumes after a worker or the endpoint
died never asks an answered item twice. Budgets of a round's loop: ``check_round_budget`` and
``charge_round`` over ``EndpointUsage``.
"""

from __future__ import annotations

import base64
import dataclasses
import fnmatch
import hashlib
import ipaddress
import json
import logging
import os
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F

from dynabench.errors import RuleError
from dynabench.jsonbounds import loads_bounded

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


def _setting(name, default):
    return getattr(settings, name, default)


# --- the URL check ---------------------------------------------------------------------------

DEFAULT_BLOCKED = ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                   "fc00::/7", "0.0.0.0/8")


def _allowlist() -> tuple[list[str], list]:
    names, networks = [], []
    for entry in _setting("DYNABENCH_ENDPOINT_ALLOWLIST", []) or []:
        entry = str(entry).strip().lower()
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if entry:
                names.append(entry)
    return names, networks


def _always_refused(address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_link_local or address.is_multicast or address.is_unspecified or address.is_reserved or (
        isinstance(address, ipaddress.IPv6Address) and address in ipaddress.ip_network("fd00:ec2::/32")
    )


def _resolve(host: str, port: int) -> list:
    try:
        return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)]
    except (socket.gaierror, UnicodeError, ValueError) as error:
        raise RuleError(EndpointCode.BAD_URL, f"The endpoint's host '{host}' does not resolve ({error}).", field="base_url") from None


def check_url(url: str) -> str:
    """Return ``url`` normalised (no trailing slash) when the platform may call it; raise ``RuleError``.

    Codes: ``endpoint_bad_url`` (not http(s), credentials in the URL, no host, a host that does not
    resolve), ``endpoint_url_not_allowed`` (not on the allow-list, or an address that is refused:
    see the module docstring).
    """
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise RuleError(EndpointCode.BAD_URL, "An endpoint URL starts with http:// or https://.", field="base_url")
    if parts.username or parts.password or "@" in parts.netloc:
        raise RuleError(EndpointCode.BAD_URL, "Put the API key in its own field, not in the URL.", field="base_url")
    host = (parts.hostname or "").lower()
    if not host:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL has no host.", field="base_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL's port is not a number.", field="base_url") from None
    names, networks = _allowlist()
    named = any(fnmatch.fnmatchcase(host, pattern) for pattern in names)
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is None and not named:  # refused before any DNS look-up of a name nobody listed
        raise RuleError(
            EndpointCode.URL_NOT_ALLOWED,
            f"The host '{host}' is not on the platform's endpoint allow-list; ask an admin to add it to "
            "DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
        )
    addresses = [literal] if literal is not None else _resolve(host, port)
    blocked = [ipaddress.ip_network(n) for n in _setting("DYNABENCH_ENDPOINT_BLOCKED_NETWORKS", DEFAULT_BLOCKED)]
    for address in addresses:
        listed = any(address.version == n.version and address in n for n in networks)
        if _always_refused(address):
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The endpoint's host '{host}' resolves to {address}, a link-local, multicast or reserved address "
                "(such as a cloud metadata service); the platform never calls those.", field="base_url",
            )
        if not (named or listed):
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The host '{host}' is not on the platform's endpoint allow-list; ask an admin to add it to "
                "DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
            )
        if any(address.version == n.version and address in n for n in blocked) and not listed:
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The host '{host}' resolves to {address}, inside the platform's own network; only an allow-list "
                "entry naming that network lets the platform call it.", field="base_url",
            )
    return url.rstrip("/")


def api_url(endpoint) -> str:
    """The full URL of the endpoint's API (``.../v1/chat/completions`` or ``.../v1/completions``)."""
    base = endpoint.base_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return base + ("/chat/completions" if endpoint.api == endpoint.Api.CHAT else "/completions")


# --- keys --------------------------------------------------------------------------------------


def _fernet():
    from cryptography.fernet import Fernet

    digest = hashlib.sha256(b"dynabench-endpoint-key:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def set_api_key(endpoint, key: str | None) -> None:
    """Store ``key`` encrypted on ``endpoint`` (not saved here); an empty key removes it."""
    endpoint.api_key_encrypted = _fernet().encrypt(key.encode()).decode() if key else ""


def check_key_env(name: str) -> str:
    """Return the environment variable name for a key, or raise ``endpoint_bad_key_env`` when it does not
    start with ``settings.DYNABENCH_ENDPOINT_KEY_ENV_PREFIX`` (no record may name another secret)."""
    name = (name or "").strip()
    prefix = _setting("DYNABENCH_ENDPOINT_KEY_ENV_PREFIX", "DYNABENCH_ENDPOINT_KEY_")
    if name and (not name.startswith(prefix) or not name.replace("_", "").isalnum()):
        raise RuleError(EndpointCode.BAD_KEY_ENV, f"The key's environment variable must be named {prefix}<NAME>.", field="api_key_env")
    return name


def api_key(endpoint) -> str:
    """The endpoint's API key in clear (for the Authorization header only), or '' when it has none."""
    if endpoint.api_key_env:
        return os.environ.get(check_key_env(endpoint.api_key_env), "")
    if endpoint.api_key_encrypted:
        from cryptography.fernet import InvalidToken

        try:
            return _fernet().decrypt(endpoint.api_key_encrypted.encode()).decode()
        except InvalidToken:
            raise RuleError(EndpointCode.BAD_SETTINGS, "The endpoint's stored key cannot be read (SECRET_KEY changed?); set it again.") from None
    return ""


def has_api_key(endpoint) -> bool:
    """Whether a key is set (encrypted or by environment variable), for pages that say so without showing it."""
    return bool(endpoint.api_key_encrypted or endpoint.api_key_env)


# --- records -------------------------------------------------------------------------------------


def clean_params(params) -> dict:
    """Return the generation parameters (``PARAMS`` only, each checked), or raise ``endpoint_bad_settings``."""
    params = params or {}
    if not isinstance(params, dict):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The generation parameters are an object.", field="params")
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"Unknown generation parameters {unknown}; allowed: {', '.join(PARAMS)}.", field="params")
    out = {}
    checks = {"temperature": (float, 0, 2), "top_p": (float, 0, 1), "max_tokens": (int, 1, 4096), "seed": (int, 0, 2**31 - 1)}
    for name, (kind, low, high) in checks.items():
        if params.get(name) is None:
            continue
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not float(value).is_integer()):
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'{name}' is a number.", field="params")
        if not low <= value <= high:
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'{name}' lies between {low} and {high}.", field="params")
        out[name] = kind(value)
    if params.get("stop") is not None:
        stop = params["stop"]
        stop = [stop] if isinstance(stop, str) else stop
        if not isinstance(stop, list) or len(stop) > 4 or not all(isinstance(s, str) and 0 < len(s) <= 64 for s in stop):
            raise RuleError(EndpointCode.BAD_SETTINGS, "'stop' is up to 4 strings of 1-64 characters.", field="params")
        out["stop"] = stop
    return out


def create_endpoint_model(
    *, task, owner, name: str, base_url: str, model_name: str, api: str = "chat", params=None, prompt=None,
    api_key: str = "", api_key_env: str = "", timeout_s: float = 30.0, max_retries: int = 3, max_concurrency: int = 4,
    description: str = "", published: bool = False, anonymous: bool = False, status=None,
):
    """Create an ``MLModel`` of kind ``endpoint`` and its ``Endpoint`` in one transaction; return the model.

    Checks: the task kind takes endpoints (``spec.takes_endpoints``), ``check_url``,
    ``clean_params``, the prompt overrides (``system``/``user`` strings), the key's environment
    variable name (``check_key_env``), a model name, and bounds on the timeout (1-600 s), retries
    (0-10) and concurrency (1-64). Raises ``RuleError`` (codes ``EndpointCode``).
    """
    from tasks.models import Endpoint, MLModel

    if not task.spec.takes_endpoints:
        raise RuleError(EndpointCode.KIND_TAKES_NO_ENDPOINT, f"Tasks of kind {task.spec.display_name} take no endpoint models.")
    url = check_url(base_url)
    if api not in Endpoint.Api.values:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"'api' is one of {', '.join(Endpoint.Api.values)}.", field="api")
    if api not in task.spec.endpoint_apis:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"A {task.spec.display_name} task sends images: its endpoints use the "
                        f"{' or '.join(task.spec.endpoint_apis)} API.", field="api")
    model_name = (model_name or "").strip()
    if not model_name or len(model_name) > 200:
        raise RuleError(EndpointCode.BAD_SETTINGS, "Give the endpoint's model name (1-200 characters).", field="model_name")
    prompt = prompt or {}
    if not isinstance(prompt, dict) or set(prompt) - {"system", "user"} or not all(
        isinstance(v, str) and len(v) <= 5000 for v in prompt.values()
    ):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The prompt overrides are 'system' and 'user' strings.", field="prompt")
    checks = (("timeout_s", timeout_s, 1, 600), ("max_retries", max_retries, 0, 10), ("max_concurrency", max_concurrency, 1, 64))
    for field, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'{field}' lies between {low} and {high}.", field=field)
    endpoint = Endpoint(
        base_url=url, api=api, model_name=model_name, params=clean_params(params), prompt=prompt,
        api_key_env=check_key_env(api_key_env), timeout_s=float(timeout_s), max_retries=int(max_retries),
        max_concurrency=int(max_concurrency),
    )
    set_api_key(endpoint, api_key if not api_key_env else "")
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=owner, name=name, description=description, kind=MLModel.Kind.ENDPOINT,
            checksum=settings_checksum(endpoint), published=published, anonymous=anonymous,
            status=status or MLModel.Status.UPLOADED,
        )
        endpoint.model = model
        endpoint.save()
    return model


def settings_checksum(endpoint) -> str:
    """sha256 of what decides the endpoint's answers (URL, API, model name, parameters, prompt): the
    model's ``checksum``, recorded on every evaluation run (the key is left out)."""
    body = json.dumps([endpoint.base_url, endpoint.api, endpoint.model_name, endpoint.params, endpoint.prompt], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


# --- the circuit breaker ------------------------------------------------------------------------


_memo: dict[str, tuple[float, dict]] = {}
_memo_lock = threading.Lock()


def _breaker_key(model) -> str:
    """The breaker's cache key: the model's id and creation time (a reused id never inherits a state)."""
    return f"endpoint-breaker:{model.pk}:{model.created_at.timestamp() if model.created_at else 0:.6f}"


def _read(model) -> dict:
    """The breaker's state, read from the shared cache at most every ``DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S``
    seconds per process (1 s; this process's own outcomes update it at once), so a call does not pay a
    cache round trip: another process's opening is seen here within that time."""
    key = _breaker_key(model)
    now = time.monotonic()
    with _memo_lock:
        memo = _memo.get(key)
    if memo is not None and now - memo[0] < float(_setting("DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S", 1.0)):
        return memo[1]
    state = cache.get(key) or {}
    with _memo_lock:
        _memo[key] = (now, state)
    return state


def _remember(key: str, state: dict) -> None:
    with _memo_lock:
        _memo[key] = (time.monotonic(), state)


def breaker_open_for(model) -> float:
    """Seconds until ``model``'s breaker lets a call through again (0: closed or cooled down)."""
    return max(0.0, float(_read(model).get("open_until", 0.0)) - time.time())


def _record_outcome(model, ok: bool, reason: str = "") -> None:
    key = _breaker_key(model)
    if ok:
        cache.delete(key)
        _remember(key, {})
        return
    state = cache.get(key) or {}
    failures = int(state.get("failures", 0)) + 1
    state = {"failures": failures, "open_until": state.get("open_until", 0.0), "reason": reason[:300]}
    if failures >= int(_setting("DYNABENCH_ENDPOINT_BREAKER_FAILURES", 5)):
        state["open_until"] = time.time() + float(_setting("DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S", 30))
    cache.set(key, state, timeout=3600)
    _remember(key, state)


def breaker_state(model) -> dict:
    """``{"open": bool, "seconds": float, "failures": int, "reason": str}`` of ``model``'s breaker."""
    state = _read(model)
    seconds = max(0.0, float(state.get("open_until", 0.0)) - time.time())
    return {"open": seconds > 0, "seconds": seconds, "failures": int(state.get("failures", 0)), "reason": state.get("reason", "")}


def reset_breaker(model) -> None:
    """Close ``model``'s breaker (an owner fixed the endpoint)."""
    key = _breaker_key(model)
    cache.delete(key)
    _remember(key, {})


def unavailable(model, seconds: float) -> RuleError:
    """The refusal while ``model``'s breaker is open (503)."""
    return RuleError(
        EndpointCode.UNAVAILABLE,
        f"The model in the loop ({model.name}) is an endpoint that stopped answering, so the platform stopped "
        f"calling it for {seconds:.0f} s more. Nothing was saved; keep your text and submit again then.",
        status_code=503,
    )


# --- calls ------------------------------------------------------------------------------------------


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


_clients: dict[tuple, object] = {}
_semaphores: dict[tuple, threading.BoundedSemaphore] = {}
_clients_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _clients_lock, _memo_lock
    _clients_lock, _memo_lock = threading.Lock(), threading.Lock()
    _clients.clear()
    _semaphores.clear()
    _memo.clear()


os.register_at_fork(after_in_child=_reset_after_fork)


def _client(endpoint):
    """The process's ``httpx.Client`` and semaphore for the endpoint's current settings."""
    import httpx

    key = (endpoint.model_id, endpoint.updated_at, endpoint.max_concurrency, endpoint.timeout_s)
    with _clients_lock:
        if key not in _clients:
            for old in [k for k in _clients if k[0] == endpoint.model_id]:
                _clients.pop(old).close()
                _semaphores.pop(old, None)
            limits = httpx.Limits(max_connections=endpoint.max_concurrency, max_keepalive_connections=endpoint.max_concurrency)
            _clients[key] = httpx.Client(
                timeout=httpx.Timeout(endpoint.timeout_s), limits=limits, follow_redirects=False, trust_env=False,
            )
            _semaphores[key] = threading.BoundedSemaphore(endpoint.max_concurrency)
        return _clients[key], _semaphores[key]


def _text(content) -> str:
    """A message's text for a completions prompt; content parts (an image) cannot go there: refused
    (``create_endpoint_model`` keeps kinds that send images on the chat API; this catches an endpoint
    switched to completions afterwards)."""
    if isinstance(content, str):
        return content
    raise RuleError(EndpointCode.BAD_SETTINGS, "This task sends images, which only the chat API carries: set the endpoint's API to chat.",
                    field="api")


def request_body(endpoint, messages: list[dict]) -> dict:
    """The JSON body of one call: chat messages, or for ``/v1/completions`` one prompt joining them."""
    body = {"model": endpoint.model_name, **endpoint.params}
    if endpoint.api == endpoint.Api.CHAT:
        body["messages"] = messages
    else:
        body["prompt"] = "\n\n".join(_text(m["content"]) for m in messages) + "\n"
    return body


def cache_key(endpoint, messages: list[dict]) -> str:
    """sha256 of the request that decides the answer (API, model name, parameters, messages)."""
    return hashlib.sha256(json.dumps(request_body(endpoint, messages) | {"api": endpoint.api}, sort_keys=True).encode()).hexdigest()


def _read_bounded(response, limit: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def _answer(endpoint, data: bytes, latency_ms: float) -> Answer:
    try:
        body = loads_bounded(data)
        choice = body["choices"][0]
        text = choice["message"]["content"] if endpoint.api == endpoint.Api.CHAT else choice["text"]
        if not isinstance(text, str):
            raise TypeError("the answer's text is not a string")
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise EndpointError(EndpointCode.FAILED, f"The endpoint's answer is not an OpenAI-style completion ({error}).") from None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}

    def count(name):
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    raw = {"id": str(body.get("id", ""))[:200], "model": str(body.get("model", ""))[:200],
           "finish_reason": str(choice.get("finish_reason", ""))[:50], "text": text, "usage": usage}
    return Answer(text=text, raw=raw, latency_ms=latency_ms, prompt_tokens=count("prompt_tokens"),
                  completion_tokens=count("completion_tokens"))


def _backoff(attempt: int, retry_after: str | None) -> float:
    if retry_after:
        try:
            return min(BACKOFF_MAX_S, max(0.0, float(retry_after)))
        except ValueError:
            pass
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2**attempt) * (0.5 + random.random() / 2)


class Retries:
    """The one retry rule of every request to an endpoint, plain (``call``) or streamed
    (``tasks.loop.chat.stream_chat``): after the first try, up to ``endpoint.max_retries`` more on an
    HTTP 429 or 5xx answer and on a connection error, each after ``_backoff`` (the answer's
    ``Retry-After`` when it gives one, else exponential backoff with jitter, at most
    ``BACKOFF_MAX_S``); none after a timeout, another HTTP status, or an ``EndpointError`` raised
    by the try itself (a malformed or oversized answer). ``error`` holds the last failure
    (``EndpointError``); counting it in the circuit breaker is the caller's::

        tries = Retries(endpoint)
        for _ in tries:
            with tries.guard():
                ...  # one request; return on success, tries.refused(response) on another status
        _record_outcome(model, False, tries.error.message)
        raise tries.error
    """

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.error: EndpointError | None = None
        self._stop = False
        self._retry_after: str | None = None

    def __iter__(self):
        for attempt in range(self.endpoint.max_retries + 1):
            self._retry_after = None
            yield attempt
            if self._stop:
                return
            if attempt < self.endpoint.max_retries:
                time.sleep(_backoff(attempt, self._retry_after))

    def refused(self, response) -> None:
        """Record an answer other than 200: retried when 429 or 5xx (after its ``Retry-After``)."""
        self.error = EndpointError(EndpointCode.FAILED, f"The endpoint answered HTTP {response.status_code}.")
        if response.status_code != 429 and response.status_code < 500:
            self._stop = True
        else:
            self._retry_after = response.headers.get("retry-after")

    def stop(self) -> None:
        """No more tries (e.g. a stream that already showed part of its answer)."""
        self._stop = True

    @contextmanager
    def guard(self):
        """Run one try: a timeout, a connection error or an ``EndpointError`` inside becomes ``error``."""
        import httpx

        try:
            yield
        except httpx.TimeoutException:
            self.error = EndpointError(EndpointCode.TIMED_OUT, f"The endpoint did not answer within {self.endpoint.timeout_s:g} s.")
            self._stop = True
        except httpx.TransportError as exc:
            self.error = EndpointError(EndpointCode.FAILED, f"The connection to the endpoint failed ({type(exc).__name__}).")
        except EndpointError as exc:
            self.error = exc
            self._stop = True


def call(endpoint, messages: list[dict], *, checked: bool = False, failures_known: bool = True) -> Answer:
    """Send one request to ``endpoint`` and return its ``Answer``; raise ``EndpointError`` when it fails.

    Refuses at once while the breaker is open (``endpoint_unavailable``) and checks the URL again
    (``check_url``, a ``RuleError``), unless the caller did both just before (``checked``); retries
    429/5xx/connection errors with backoff; counts a failure in the breaker, and a success too when
    the breaker may hold failures (``failures_known``; a caller that read it closed and clean passes
    False and spares the shared cache a round trip). Thread-safe; blocks while ``max_concurrency``
    calls are in flight. Retries follow ``Retries``.
    """
    model = endpoint.model
    if not checked:
        if breaker_open_for(model) > 0:
            raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
        check_url(endpoint.base_url)
    url = api_url(endpoint)
    client, semaphore = _client(endpoint)
    key = api_key(endpoint)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = request_body(endpoint, messages)
    limit = int(_setting("DYNABENCH_ENDPOINT_MAX_RESPONSE_BYTES", 2**20))
    started = time.perf_counter()
    tries = Retries(endpoint)
    for _ in tries:
        with tries.guard(), semaphore, client.stream("POST", url, json=body, headers=headers) as response:
            data = _read_bounded(response, limit)
            if response.status_code == 200:
                answer = _answer(endpoint, data, (time.perf_counter() - started) * 1000)
                if failures_known:
                    _record_outcome(model, True)
                return answer
            tries.refused(response)
    _record_outcome(model, False, tries.error.message)
    logger.warning("endpoint model %s: %s", model.pk, tries.error.message)
    raise tries.error


def post_json(endpoint, path: str, body: dict, *, max_bytes: int) -> tuple[dict, float]:
    """POST ``body`` to ``<base_url>/v1/<path>`` (another API of the same server, e.g. ``images/generations``)
    with every guard of ``call``: the breaker (refused at once while open), the allow-list (``check_url``,
    checked before each call), the record's timeout, its retries with backoff after 429/5xx/lost
    connections, its concurrency limit, the key in the header only; the answer read up to ``max_bytes``.
    Returns ``(parsed JSON object, latency in ms)``; raises ``EndpointError`` (the failure counted in the
    breaker) or ``RuleError`` (a URL the allow-list refuses)."""
    import httpx

    model = endpoint.model
    if breaker_open_for(model) > 0:
        raise EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
    check_url(endpoint.base_url)
    base = endpoint.base_url.rstrip("/")
    url = (base if base.endswith("/v1") else base + "/v1") + "/" + path.lstrip("/")
    client, semaphore = _client(endpoint)
    key = api_key(endpoint)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    error = None
    for attempt in range(endpoint.max_retries + 1):
        retry_after = None
        try:
            with semaphore, client.stream("POST", url, json=body, headers=headers) as response:
                data = _read_bounded(response, max_bytes)
                if response.status_code == 200:
                    try:
                        parsed = loads_bounded(data)
                    except ValueError as exc:
                        error = EndpointError(EndpointCode.FAILED, f"The endpoint's answer is not JSON ({exc}).")
                        break
                    if not isinstance(parsed, dict):
                        error = EndpointError(EndpointCode.FAILED, "The endpoint's answer is not a JSON object.")
                        break
                    _record_outcome(model, True)
                    return parsed, (time.perf_counter() - started) * 1000
                error = EndpointError(EndpointCode.FAILED, f"The endpoint answered HTTP {response.status_code}.")
                if response.status_code != 429 and response.status_code < 500:
                    break
                retry_after = response.headers.get("retry-after")
        except httpx.TimeoutException:
            error = EndpointError(EndpointCode.TIMED_OUT, f"The endpoint did not answer within {endpoint.timeout_s:g} s.")
            break
        except httpx.TransportError as exc:
            error = EndpointError(EndpointCode.FAILED, f"The connection to the endpoint failed ({type(exc).__name__}).")
        except EndpointError as exc:
            error = exc
            break
        if attempt < endpoint.max_retries:
            time.sleep(_backoff(attempt, retry_after))
    _record_outcome(model, False, error.message)
    logger.warning("endpoint model %s: %s", model.pk, error.message)
    raise error


# --- the predictor ----------------------------------------------------------------------------------


class EndpointPredictor:
    """The registry's predictor for an endpoint model: ``predict(inputs)`` like a local model.

    Each input becomes messages (``task.spec.endpoint_messages``); answers already in the
    response cache are reused, the others are asked concurrently (at most ``max_concurrency`` in
    flight) and stored as they arrive (in the calling thread). Each output is the kind's
    (``task.spec.endpoint_answer``) plus ``"endpoint"``: ``{"model_id", "model", "api", "params",
    "raw", "latency_ms", "prompt_tokens", "completion_tokens", "cached"}``. When some calls fail,
    the answers that came are stored first, then ``RuleError`` is raised with the first failure's
    code (``endpoint_failed``, ``endpoint_timed_out``, ``endpoint_unavailable``; 503).
    ``measures_memory`` is False: the model's memory lies outside the platform.
    """

    kind = "endpoint"
    measures_memory = False
    nbytes = 0

    def __init__(self, model, endpoint):
        self.model, self.endpoint, self.task = model, endpoint, model.task
        self.batch_size = endpoint.max_concurrency

    def predict(self, inputs: list[dict], *, batch_size: int | None = None) -> list[dict]:
        from tasks.models import EndpointResponse

        spec, config = self.task.spec, self.task.config
        messages = [spec.endpoint_messages(config, item, self.endpoint.prompt) for item in inputs]
        keys = [cache_key(self.endpoint, m) for m in messages]
        answers: dict[str, Answer] = {}
        for row in EndpointResponse.objects.filter(model=self.model, key__in=set(keys)):
            answers[row.key] = Answer(row.text, row.raw, row.latency_ms, row.prompt_tokens, row.completion_tokens, cached=True)
        todo = {}
        for key, m in zip(keys, messages):
            if key not in answers:
                todo.setdefault(key, m)
        failure = None
        if todo:
            failure = self._ask(todo, answers)
        if failure is not None:
            raise RuleError(failure.code, f"The endpoint model '{self.model.name}' failed: {failure.message}", status_code=503)
        return [self._output(spec, config, item, answers[key]) for item, key in zip(inputs, keys)]

    def _ask(self, todo: dict[str, list[dict]], answers: dict[str, Answer]) -> EndpointError | None:
        """Ask the endpoint for every request of ``todo`` (key → messages), at most ``max_concurrency`` at
        once; put the answers in ``answers`` and the response cache (written in batches of at most
        ``STORE_EVERY`` answers or ``STORE_EVERY_S`` seconds, so a worker that dies loses at most that);
        return the first failure (None when every call answered). The breaker is read and the URL
        checked once for the whole batch; one request is sent from the calling thread."""
        state = breaker_state(self.model)
        if state["open"]:
            return EndpointError(EndpointCode.UNAVAILABLE, "The endpoint's circuit breaker is open after repeated failures.")
        try:
            check_url(self.endpoint.base_url)
        except RuleError as error:
            return EndpointError(error.code, error.message)
        ask = lambda m: call(self.endpoint, m, checked=True, failures_known=state["failures"] > 0)  # noqa: E731
        if len(todo) == 1:
            [(key, m)] = todo.items()
            try:
                answers[key] = ask(m)
            except EndpointError as error:
                return error
            self._store([(key, answers[key])])
            return None
        failure, pending, flushed = None, [], time.monotonic()
        workers = min(len(todo), self.endpoint.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"endpoint-{self.model.pk}") as pool:
            futures = {pool.submit(ask, m): key for key, m in todo.items()}
            for future in as_completed(futures):
                try:
                    answer = future.result()
                except EndpointError as error:
                    failure = failure or error
                    continue
                key = futures[future]
                answers[key] = answer
                pending.append((key, answer))
                if len(pending) >= STORE_EVERY or time.monotonic() - flushed >= STORE_EVERY_S:
                    self._store(pending)
                    pending, flushed = [], time.monotonic()
        self._store(pending)
        return failure

    def _store(self, rows: list[tuple[str, Answer]]) -> None:
        """Write answers to the response cache in one statement (an answer another process stored first is kept)."""
        from tasks.models import EndpointResponse

        if rows:
            EndpointResponse.objects.bulk_create([
                EndpointResponse(model=self.model, key=key, text=a.text, raw=a.raw, latency_ms=a.latency_ms,
                                 prompt_tokens=a.prompt_tokens, completion_tokens=a.completion_tokens)
                for key, a in rows
            ], ignore_conflicts=True)

    def _output(self, spec, config, item: dict, answer: Answer) -> dict:
        output = spec.endpoint_answer(config, answer.text, item)
        output["endpoint"] = {
            "model_id": self.model.pk, "model": self.endpoint.model_name, "api": self.endpoint.api,
            "params": self.endpoint.params, "raw": answer.raw, "latency_ms": round(answer.latency_ms, 3),
            "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens, "cached": answer.cached,
        }
        return output


def predictor_for(model) -> EndpointPredictor:
    """A predictor for the endpoint model ``model`` (its ``Endpoint`` read now, so changes apply at once)."""
    from tasks.models import Endpoint

    try:
        endpoint = Endpoint.objects.get(model_id=model.pk)
    except Endpoint.DoesNotExist:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"The endpoint model '{model.name}' has no connection settings.") from None
    endpoint.model = model
    return EndpointPredictor(model, endpoint)


# --- a round's budget -------------------------------------------------------------------------------


def check_round_budget(round, model) -> None:
    """Raise ``endpoint_budget_spent`` (409) when ``round``'s endpoint calls or tokens are used up."""
    if round.endpoint_call_budget is None and round.endpoint_token_budget is None:
        return
    from django.db.models import Sum

    from tasks.models import EndpointUsage

    used = EndpointUsage.objects.filter(round=round).aggregate(calls=Sum("calls"), tokens=Sum("tokens"))
    calls, tokens = used["calls"] or 0, used["tokens"] or 0
    if (round.endpoint_call_budget is not None and calls >= round.endpoint_call_budget) or (
        round.endpoint_token_budget is not None and tokens >= round.endpoint_token_budget
    ):
        raise RuleError(
            EndpointCode.BUDGET_SPENT,
            f"Round {round.number} has used its budget for the endpoint model in the loop ({calls} calls, {tokens} tokens). "
            "Nothing was saved; a task owner can raise the budget.", status_code=409,
        )


def charge_round(round, model, output: dict) -> None:
    """Count one endpoint answer (unless it came from the cache) against ``round``'s budget."""
    from tasks.models import EndpointUsage

    info = output.get("endpoint") or {}
    if info.get("cached", True):
        return
    tokens = (info.get("prompt_tokens") or 0) + (info.get("completion_tokens") or 0)
    counted = dict(calls=F("calls") + 1, tokens=F("tokens") + tokens)
    if not EndpointUsage.objects.filter(round=round, model=model).update(**counted):
        with transaction.atomic():
            usage, _ = EndpointUsage.objects.select_for_update().get_or_create(round=round, model=model)
            EndpointUsage.objects.filter(pk=usage.pk).update(**counted)


def round_usage(round) -> dict:
    """``{"calls", "tokens", "call_budget", "token_budget"}`` of ``round``'s endpoint models."""
    from django.db.models import Sum

    from tasks.models import EndpointUsage

    used = EndpointUsage.objects.filter(round=round).aggregate(calls=Sum("calls"), tokens=Sum("tokens"))
    return {"calls": used["calls"] or 0, "tokens": used["tokens"] or 0, "call_budget": round.endpoint_call_budget,
            "token_budget": round.endpoint_token_budget}
