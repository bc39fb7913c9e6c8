"""API keys: stored encrypted (Fernet, key derived from ``SECRET_KEY``) or named by an environment variable; in clear only for the ``Authorization`` header."""

from __future__ import annotations

import base64
import hashlib
import os

from django.conf import settings

from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, setting


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
    prefix = setting("DYNABENCH_ENDPOINT_KEY_ENV_PREFIX", "DYNABENCH_ENDPOINT_KEY_")
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
