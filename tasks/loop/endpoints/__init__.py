"""Models behind endpoints: an ``MLModel`` of kind ``endpoint`` answers through an OpenAI-compatible API.

One client (``httpx``) covers vLLM, TGI's messages API, Ollama, llama.cpp's server,
``transformers serve`` and the hosted providers that speak ``/v1/chat/completions`` or
``/v1/completions``, and the speech servers that speak ``/v1/audio/transcriptions`` (the clip sent as a
multipart file: ``calls.request_content``; the speech recognition kind's only API). The registry (``tasks.loop.registry.get_predictor``) hands back an
``EndpointPredictor`` for such a record, so the model in the loop and the evaluation jobs use it
like a local model. What a task kind sends and how the answer becomes its output is the kind's
(``TaskKindSpec.endpoint_messages`` / ``endpoint_answer``).

Safety (server-side request forgery). ``check_url`` accepts only ``http``/``https`` URLs without
credentials whose host and port are on the admin's allow-list ``settings.DYNABENCH_ENDPOINT_ALLOWLIST``
(host names, ``*.suffix`` patterns, or networks, each with its port or port range such as
``127.0.0.1/32:8000``; an entry without a port allows only the scheme's default port): a host name
must match a name entry (an unlisted name is refused before any DNS look-up), an address must lie
in a network entry. Every address the host resolves to is checked: link-local (cloud metadata ``169.254.169.254``), multicast, unspecified
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
calls per endpoint are in flight at once across every web and worker process (``slots``). A circuit breaker in the shared cache (Redis:
every web and worker process sees it) opens after ``DYNABENCH_ENDPOINT_BREAKER_FAILURES``
consecutive failed calls (5) for ``DYNABENCH_ENDPOINT_BREAKER_COOLDOWN_S`` (30 s): meanwhile calls
fail at once with ``endpoint_unavailable``; after the cool-down the next call tries again (one
success closes it, one failure opens it again). Each process reads the shared state at most once a
second (``DYNABENCH_ENDPOINT_BREAKER_READ_EVERY_S``) and its own outcomes at once, so a call pays no
cache round trip.

Cache. Every answer is stored in ``EndpointResponse`` under the sha256 of the API, the model name,
the parameters and the messages, so an evaluation that resumes after a worker or the endpoint
died never asks an answered item twice. Every request is sent inside the gate's admission
(``tasks/loop/gate.py``: consent, the round's budget reserved atomically, one audit row per call);
``budget.round_usage`` reads what a round used.

The package, one module per concern: ``base`` (codes, ``Answer``, ``EndpointError``), ``urls``
(the allow-list), ``keys``, ``records`` (creating one), ``breaker``, ``slots`` (the shared
concurrency limit), ``calls`` (from a thread), ``aio`` (from the event loop: async views),
``predictor`` (the registry's), ``budget`` (a round's).
"""
