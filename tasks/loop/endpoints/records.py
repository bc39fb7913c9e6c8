"""Creating an endpoint model: its record, its checked settings and the checksum of what decides its answers."""

from __future__ import annotations

import hashlib
import json

from django.db import transaction

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, PARAMS, setting
from tasks.loop.endpoints.keys import check_key_env, set_api_key
from tasks.loop.endpoints.urls import check_url


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
    description: str = "", published: bool = False, anonymous: bool = False, status=None, loop_allowed: bool = False,
):
    """Create an ``MLModel`` of kind ``endpoint`` and its ``Endpoint`` in one transaction; return the model.

    Checks: the task kind takes endpoints (``spec.takes_endpoints``), ``check_url``,
    ``clean_params``, the prompt overrides (``system``/``user`` strings), the key's environment
    variable name (``check_key_env``), a model name, and bounds on the timeout (``check_timeout``), retries
    (0-10) and concurrency (1-64). ``loop_allowed``: the owner's consent to annotation loops of tasks
    they do not own (``Endpoint.loop_allowed``). Raises ``RuleError`` (codes ``EndpointCode``).
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
    check_timeout(timeout_s)
    checks = (("max_retries", max_retries, 0, 10), ("max_concurrency", max_concurrency, 1, 64))
    for field, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise RuleError(EndpointCode.BAD_SETTINGS, f"'{field}' lies between {low} and {high}.", field=field)
    endpoint = Endpoint(
        base_url=url, api=api, model_name=model_name, params=clean_params(params), prompt=prompt,
        api_key_env=check_key_env(api_key_env), timeout_s=float(timeout_s), max_retries=int(max_retries),
        max_concurrency=int(max_concurrency), loop_allowed=bool(loop_allowed),
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


def check_timeout(timeout_s) -> float:
    """Return an endpoint's timeout in seconds, or raise ``endpoint_bad_settings``: from 1 s up to
    what a page waits for a model (``settings.DYNABENCH_MODEL_WAIT_S``, 300 s by default), so an
    annotator's page never gives up before the endpoint does."""
    longest = int(setting("DYNABENCH_MODEL_WAIT_S", 300))
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 1 <= timeout_s <= longest:
        raise RuleError(EndpointCode.BAD_SETTINGS, f"'timeout_s' lies between 1 and {longest} seconds: the platform's pages wait "
                        f"at most {longest} s for a model (DYNABENCH_MODEL_WAIT_S).", field="timeout_s")
    return float(timeout_s)


def settings_checksum(endpoint) -> str:
    """sha256 of what decides the endpoint's answers (URL, API, model name, parameters, prompt): the
    model's ``checksum``, recorded on every evaluation run (the key is left out)."""
    body = json.dumps([endpoint.base_url, endpoint.api, endpoint.model_name, endpoint.params, endpoint.prompt], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()
