"""One-time submission keys: a repeated submit returns the first result and writes nothing.

Every form that creates something (the create page's example form, the validation queue's
verdict form) carries a fresh key in a hidden ``submission_key`` field, issued when the form
is rendered (``new_key``). API clients send the same kind of key in the ``Idempotency-Key``
header. A double click, a browser retry or a flaky network therefore posts the same key
twice; the service that writes stores the key on the row it creates (unique per actor) and,
seeing the key again, returns that row instead of writing a second one.

This module holds the parts every surface shares: the key's format and its parsing
(``clean_key``, ``key_from_request``). The services (``annotation.services.create_example``,
``validation.services.record_validation``) look the key up under the lock they already hold,
so two concurrent requests with one key cannot both write.
"""

import re
import uuid

from dynabench.errors import RuleError

FIELD = "submission_key"
"""Name of the hidden form field (and of the column on the rows that store it)."""
HEADER = "Idempotency-Key"
"""HTTP header API clients send the key in."""
REPLAYED_HEADER = "Idempotent-Replayed"
"""Response header set to ``true`` when an answer repeats an earlier submission's result."""
MAX_LENGTH = 64
_KEY = re.compile(r"^[A-Za-z0-9_.:-]{8,64}$")


def new_key() -> str:
    """Return a fresh random key (32 hex characters) for one rendering of a form."""
    return uuid.uuid4().hex


def clean_key(value) -> str:
    """Return ``value`` as a submission key, ``""`` when none was given.

    A key is 8 to 64 characters of letters, digits, ``_ . : -`` (a UUID fits). Raises
    ``RuleError`` ``bad_submission_key`` (400) naming the field otherwise.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RuleError("bad_submission_key", f"{HEADER} must be text.", field=FIELD)
    value = value.strip()
    if value and not _KEY.match(value):
        raise RuleError(
            "bad_submission_key",
            f"{HEADER} must be 8 to {MAX_LENGTH} letters, digits, '_', '.', ':' or '-' (a UUID works).",
            field=FIELD,
        )
    return value


def key_from_request(request) -> str:
    """The submission key of ``request``: the ``Idempotency-Key`` header, else the form field."""
    value = request.headers.get(HEADER)
    if value is None:
        value = request.POST.get(FIELD) if request.method == "POST" else None
    return clean_key(value)
