"""Creating and changing an endpoint model: its record, its checked settings, who may change them, and the checksum of what decides its answers."""

from __future__ import annotations

import hashlib
import json
import re

from django.db import transaction

from urllib.parse import urlsplit

from dynabench.errors import NotAllowed, RuleError
from tasks.loop import gate
from tasks.loop.endpoints.base import EndpointCode, PARAMS, TRANSCRIPTION_PARAMS, setting
from tasks.loop.endpoints.breaker import reset_breaker
from tasks.loop.endpoints.keys import check_key_env, set_api_key
from tasks.loop.endpoints.urls import check_url


#: A transcription's ``language``: an ISO 639-1 code (``en``), or a longer tag some servers take (``yue``, ``zh-TW``).
LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z]{2,4})?")

#: The most characters of a transcription's ``prompt`` (OpenAI's whisper-1 reads its last 224 tokens).
MAX_TRANSCRIPTION_PROMPT = 1000


def _clean_transcription_params(params: dict) -> dict:
    out = {}
    if params.get("language") is not None:
        if not isinstance(params["language"], str) or not LANGUAGE.fullmatch(params["language"]):
            raise RuleError(EndpointCode.BAD_SETTINGS, "'language' is an ISO 639-1 code such as 'en'.", field="params")
        out["language"] = params["language"]
    if params.get("prompt") is not None:
        if not isinstance(params["prompt"], str) or len(params["prompt"]) > MAX_TRANSCRIPTION_PROMPT:
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'prompt' is a text of at most {MAX_TRANSCRIPTION_PROMPT} characters.",
                            field="params")
        if params["prompt"].strip():
            out["prompt"] = params["prompt"]
    return out


def clean_params(params, api: str = "chat") -> dict:
    """Return the parameters of an endpoint of ``api`` checked, or raise ``endpoint_bad_settings``: for
    chat and completions ``PARAMS`` (generation), for transcriptions ``TRANSCRIPTION_PARAMS`` (``language``
    an ISO 639-1 code, ``prompt`` a hint of at most ``MAX_TRANSCRIPTION_PROMPT`` characters, ``temperature``
    between 0 and 1)."""
    params = params or {}
    if not isinstance(params, dict):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The generation parameters are an object.", field="params")
    transcription = api == "transcriptions"
    allowed = TRANSCRIPTION_PARAMS if transcription else PARAMS
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"Unknown parameters {unknown} for the {api} API; allowed: {', '.join(allowed)}.",
                        field="params")
    out = _clean_transcription_params(params) if transcription else {}
    checks = {"temperature": (float, 0, 1 if transcription else 2), "top_p": (float, 0, 1), "max_tokens": (int, 1, 4096),
              "seed": (int, 0, 2**31 - 1)}
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


#: The connection's fields an owner may change (``update_endpoint``), besides the key.
SETTINGS = ("base_url", "api", "model_name", "params", "prompt", "api_key_env", "timeout_s", "max_retries", "max_concurrency")


def check_settings(task, *, base_url: str, api: str | None = None, model_name: str = "", params=None, prompt=None,
                   api_key_env: str = "", timeout_s: float = 30.0, max_retries: int = 3, max_concurrency: int = 4) -> dict:
    """Return the connection's settings checked and cleaned (``SETTINGS`` as keys), or raise ``RuleError``
    (codes ``EndpointCode``, ``field`` naming the setting at fault).

    Checks: the task kind takes endpoints (``spec.takes_endpoints``) and this API (``spec.endpoint_apis``),
    ``check_url`` (the allow-list), ``clean_params`` (the API's own), the prompt overrides (``system``/``user``
    strings of at most 5000 characters; none for the transcriptions API), the key's environment variable name (``check_key_env``), a model name
    (1-200 characters), and bounds on the timeout (``check_timeout``), retries (0-10) and concurrency (1-64)."""
    from tasks.models import Endpoint

    if not task.spec.takes_endpoints:
        raise RuleError(EndpointCode.KIND_TAKES_NO_ENDPOINT, f"Tasks of kind {task.spec.display_name} take no endpoint models.")
    url = check_url(base_url)
    api = api or task.spec.endpoint_apis[0]
    if api not in Endpoint.Api.values:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"'api' is one of {', '.join(Endpoint.Api.values)}.", field="api")
    if api not in task.spec.endpoint_apis:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"A {task.spec.display_name} task's endpoints use the "
                        f"{' or '.join(task.spec.endpoint_apis)} API.", field="api")
    model_name = (model_name or "").strip()
    if not model_name or len(model_name) > 200:
        raise RuleError(EndpointCode.BAD_SETTINGS, "Give the endpoint's model name (1-200 characters).", field="model_name")
    prompt = prompt or {}
    if not isinstance(prompt, dict) or set(prompt) - {"system", "user"} or not all(
        isinstance(v, str) and len(v) <= 5000 for v in prompt.values()
    ):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The prompt overrides are 'system' and 'user' strings.", field="prompt")
    if api == Endpoint.Api.TRANSCRIPTIONS and any(v.strip() for v in prompt.values()):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The transcriptions API sends a clip, not messages: leave the system prompt "
                        "and the message template empty (a hint for the transcriber is the 'prompt' parameter).", field="prompt")
    check_timeout(timeout_s)
    checks = (("max_retries", max_retries, 0, 10), ("max_concurrency", max_concurrency, 1, 64))
    for field, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'{field}' lies between {low} and {high}.", field=field)
    return {"base_url": url, "api": api, "model_name": model_name, "params": clean_params(params, api), "prompt": prompt,
            "api_key_env": check_key_env(api_key_env), "timeout_s": float(timeout_s), "max_retries": int(max_retries),
            "max_concurrency": int(max_concurrency)}


def create_endpoint_model(
    *, task, owner, name: str, base_url: str, model_name: str, api: str | None = None, params=None, prompt=None,
    api_key: str = "", api_key_env: str = "", timeout_s: float = 30.0, max_retries: int = 3, max_concurrency: int = 4,
    description: str = "", published: bool | None = None, anonymous: bool = False, status=None, consents=(),
):
    """Create an ``MLModel`` of kind ``endpoint`` and its ``Endpoint`` in one transaction; return the model.

    The settings are checked by ``check_settings`` (``api`` None: the first API the task's kind takes); ``api_key`` is stored encrypted (ignored when
    ``api_key_env`` names the key's variable). ``consents``: the purposes besides evaluation the submitter
    lets the task's owners call it for (``tasks.loop.gate.CONSENTABLE``). ``published`` None: the one rule
    of every model (``MLModel.PUBLISHED_BY_DEFAULT``). Raises ``RuleError`` (codes ``EndpointCode``).
    """
    from tasks.models import Endpoint, MLModel

    endpoint = Endpoint(**check_settings(
        task, base_url=base_url, api=api, model_name=model_name, params=params, prompt=prompt, api_key_env=api_key_env,
        timeout_s=timeout_s, max_retries=max_retries, max_concurrency=max_concurrency,
    ), consents=gate.clean_consents(consents))
    set_api_key(endpoint, api_key if not api_key_env else "")
    with transaction.atomic():
        model = MLModel.objects.create(
            task=task, owner=owner, name=name, description=description, kind=MLModel.Kind.ENDPOINT,
            checksum=settings_checksum(endpoint), anonymous=anonymous,
            published=MLModel.PUBLISHED_BY_DEFAULT if published is None else published,
            status=status or MLModel.Status.UPLOADED,
        )
        endpoint.model = model
        endpoint.save()
    return model


def check_timeout(timeout_s) -> float:
    """Return an endpoint's timeout in seconds, or raise ``endpoint_bad_settings``: from 1 s up to
    what a page waits for a model (``settings.DYNABENCH_MODEL_WAIT_S``, 300 s by default), so an
    annotator's page never gives up before the endpoint does."""
    longest = int(setting("DYNABENCH_MODEL_WAIT_S", 300))
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 1 <= timeout_s <= longest:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"'timeout_s' lies between 1 and {longest} seconds: the platform's pages wait "
                        f"at most {longest} s for a model (DYNABENCH_MODEL_WAIT_S).", field="timeout_s")
    return float(timeout_s)


def can_edit_endpoint(user, model) -> bool:
    """Whether ``user`` may change ``model``'s connection or parameters: its submitter or a superuser; an
    owner of its task only when the endpoint is the task owners' own (no submitter, or one who owns the
    task: ``tasks.loop.gate`` needs no one else's consent for it). A researcher's key and settings are theirs."""
    if not user.is_authenticated:
        return False
    if user.is_superuser or user.pk == model.owner_id:
        return True
    return model.task.is_owner(user) and gate.owned_by_task_owners(model)


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def check_endpoint_update(*, model, acting_user, api_key: str = "", remove_key: bool = False, **changes):
    """Return ``model``'s ``Endpoint`` with ``changes`` applied and checked, not saved; raise ``RuleError``.

    ``changes``: any of ``SETTINGS`` (the others keep their value), each checked as on creation
    (``check_settings``; the URL against the allow-list again, even unchanged). The key: ``api_key``
    typed sets it (stored encrypted); empty keeps the stored one; ``remove_key`` clears it (and the
    variable's name). Refusals: ``NotAllowed`` (403) unless ``can_edit_endpoint``; the model is not an
    endpoint (``endpoint_bad_settings``); a user who is not an owner of the task names a key variable
    (``endpoint_bad_key_env``: the platform's secrets are the task owners' and admins' to hand out); a
    stored key kept while the URL moves to another origin (scheme, host, port) (``endpoint_bad_settings``
    on ``api_key``: a key goes only to the server it was typed for; type it again or remove it)."""
    from tasks.models import Endpoint

    if not can_edit_endpoint(acting_user, model):
        raise NotAllowed("not_model_owner", f"Only the submitter of {model.name} (or an admin) may change its connection or "
                        "parameters: it sends their key.")
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"Unknown connection settings {unknown}; allowed: {', '.join(SETTINGS)}.",
                        field=unknown[0])
    try:
        endpoint = Endpoint.objects.get(model_id=model.pk)
    except Endpoint.DoesNotExist:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"The model '{model.name}' is not behind an endpoint.") from None
    endpoint.model = model
    old_url, old_env = endpoint.base_url, endpoint.api_key_env
    merged = {name: changes.get(name, getattr(endpoint, name)) for name in SETTINGS}
    if remove_key:
        merged["api_key_env"] = ""
    cleaned = check_settings(model.task, **merged)
    if cleaned["api_key_env"] and cleaned["api_key_env"] != old_env and not model.task.is_owner(acting_user):
        raise RuleError(EndpointCode.BAD_KEY_ENV, "Only the task's owners name a key's environment variable; type the key instead.",
                        field="api_key_env")
    for name, value in cleaned.items():
        setattr(endpoint, name, value)
    if remove_key:
        set_api_key(endpoint, "")
    elif api_key:  # a key typed wins over a variable's name
        set_api_key(endpoint, api_key)
        endpoint.api_key_env = ""
    elif cleaned["api_key_env"]:
        set_api_key(endpoint, "")
    elif endpoint.api_key_encrypted and _origin(endpoint.base_url) != _origin(old_url):
        raise RuleError(EndpointCode.BAD_SETTINGS, "The stored key goes only to the server it was given for: type the key "
                        f"again for {urlsplit(endpoint.base_url).netloc}, or remove it.", field="api_key")
    return endpoint


def update_endpoint(*, model, acting_user, api_key: str = "", remove_key: bool = False, **changes):
    """Change ``model``'s connection (``check_endpoint_update`` first: the same checks, the same refusals)
    and return the model; the console, the admin and ``PATCH /api/v1/models/{id}/endpoint`` call it.

    In one transaction: the endpoint is saved and, when what decides its answers changed (URL, API,
    model name, parameters, prompt: ``settings_checksum``), the model's ``checksum`` is the new one and
    ``tasks.signals.leaderboard_inputs_changed`` is sent for it, so the leaderboard evaluates it again
    (at most ``check_reevaluation_rate`` times an hour: past it the edit is refused, 429)
    (runs keep the ``model_checksum`` they were scored with; their scores move to their ``history``);
    answers cached from another URL are dropped (the response cache is keyed by the request, not the
    server). After the commit the circuit breaker is closed (an owner fixed the endpoint)."""
    from tasks.models import Endpoint, EndpointResponse, MLModel
    from tasks.signals import leaderboard_inputs_changed

    with transaction.atomic():
        model = MLModel.objects.select_for_update().select_related("task").get(pk=model.pk)
        old_url = Endpoint.objects.filter(model_id=model.pk).values_list("base_url", flat=True).first()
        endpoint = check_endpoint_update(model=model, acting_user=acting_user, api_key=api_key, remove_key=remove_key, **changes)
        endpoint.save()
        checksum = settings_checksum(endpoint)
        if checksum != model.checksum:
            check_reevaluation_rate(model)
            model.checksum = checksum
            model.save(update_fields=["checksum", "updated_at"])
            if endpoint.base_url != old_url:
                EndpointResponse.objects.filter(model=model).delete()
            leaderboard_inputs_changed.send(sender=MLModel, task=model.task, models=[model])
        transaction.on_commit(lambda: reset_breaker(model))
    return model


def check_reevaluation_rate(model) -> None:
    """Count one re-evaluation of ``model`` (an edit that changes its answers); raise ``RateLimited``
    (``reevaluation_rate``, 429) past ``DYNABENCH_ENDPOINT_REEVALUATIONS_PER_HOUR`` (4 by default) in
    the current hour: each re-evaluation sends every scoring item under the submitter's key."""
    from dynabench.errors import RateLimited
    from dynabench.ratelimits import count_hit

    limit = int(setting("DYNABENCH_ENDPOINT_REEVALUATIONS_PER_HOUR", 4))
    count, wait_s = count_hit(f"reevaluate:{model.pk}", window_s=3600)
    if count > limit:
        raise RateLimited("reevaluation_rate", f"{model.name} has been changed in ways that re-run its evaluation {limit} times "
                          f"this hour, the most allowed: nothing was saved. Change it again in {wait_s // 60 + 1} minutes "
                          "(its timeout, retries, concurrency and key change at any time).")


def settings_checksum(endpoint) -> str:
    """sha256 of what decides the endpoint's answers (URL, API, model name, parameters, prompt): the
    model's ``checksum``, recorded on every evaluation run (the key is left out)."""
    body = json.dumps([endpoint.base_url, endpoint.api, endpoint.model_name, endpoint.params, endpoint.prompt], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()
