"""REST API plumbing shared by every app's ``api_views``.

- ``exception_handler``: every error answer has one shape, ``{"code", "detail"}`` plus
  ``"field"`` (the first field at fault) and ``"errors"`` (``{field: [messages]}``) for
  bad input. ``RuleError`` from a service keeps its own status, code and message.
- ``StrictSerializerMixin``: a serializer that refuses fields it does not know, so a typo
  (``lable``) or an attempt to set a server-decided field (``model_wrong``) is a 400.
- ``query_int`` / ``query_choice`` / ``query_bool``: query parameters (of a request, or a mapping)
  checked, a 400 naming the bad one.

Classes named in ``REST_FRAMEWORK`` settings live in their own modules, which must not
import ``rest_framework.views`` (DRF resolves them while defining ``APIView``):
``dynabench/pagination.py``, ``throttling.py``, ``parsers.py``, ``schema.py``.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from dynabench.errors import RuleError
from dynabench.params import MAX_ID, whole_number
from dynabench.parsers import RequestTooLarge


def _first_error(errors, prefix=""):
    """Return ``(field, message)`` of the first message in DRF's nested error structure."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            name = key if key == api_settings.NON_FIELD_ERRORS_KEY else f"{prefix}{key}"
            return _first_error(value, name + ".")
    if isinstance(errors, list) and errors:
        return _first_error(errors[0], prefix)
    return prefix.rstrip(".") or None, str(errors)


def exception_handler(exc, context):
    """Answer every API error as ``{"code", "detail"[, "field", "errors"]}``.

    ``RuleError`` (and its ``NotAllowed`` 403 / ``RateLimited`` 429) keeps its status and
    code; Django's ``ValidationError`` becomes a 400; a body over the size cap a 413;
    DRF's own exceptions keep their status and get their ``default_code`` as ``code``.
    """
    if isinstance(exc, RuleError):
        set_rollback()
        return Response(exc.as_dict(), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge(f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        errors = exc.detail if isinstance(exc.detail, dict) else {api_settings.NON_FIELD_ERRORS_KEY: exc.detail}
        field, message = _first_error(errors)
        data = {"code": "invalid", "detail": f"{field}: {message}" if field and field != api_settings.NON_FIELD_ERRORS_KEY else message}
        if field and field != api_settings.NON_FIELD_ERRORS_KEY:
            data["field"] = field
        data["errors"] = errors
    else:
        detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
        data = {"code": getattr(exc, "default_code", "error"), "detail": str(detail)}
        if getattr(exc, "field", None):  # e.g. dynabench.parsers.BadCharacter
            data["field"] = exc.field
    response.data = data
    return response


class StrictSerializerMixin:
    """Refuse input fields the serializer does not declare as writable (400, ``unknown field``).

    Read-only fields count as unknown on input: a client cannot set them, so sending them
    is a mistake worth reporting rather than silently dropping.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(str(key) for key in data if key not in writable)
            if unknown:
                raise serializers.ValidationError(
                    {key: [f"Unknown field. Allowed fields: {', '.join(sorted(writable)) or 'none'}."] for key in unknown},
                    code="unknown_field",
                )
        return super().to_internal_value(data)


def _params(source):
    """The query parameters of a DRF request, or ``source`` itself when it is already a mapping."""
    return getattr(source, "query_params", source)


def query_int(request, name: str, *, minimum: int = 0, maximum: int = MAX_ID) -> int | None:
    """Return the whole-number query parameter ``name`` (None when absent); a 400 naming it when it is
    not a whole number or lies outside ``[minimum, maximum]`` (default: what a 64-bit column holds)."""
    raw = _params(request).get(name)
    if raw in (None, ""):
        return None
    value = whole_number(raw, minimum=-MAX_ID - 1)
    if value is None:
        digits = raw.strip().lstrip("-")
        if digits.isascii() and digits.isdigit():  # a whole number, past what a 64-bit column holds
            raise exceptions.ValidationError({name: [f"Must be at most {maximum}."]})
        raise exceptions.ValidationError({name: [f"Must be a whole number, not {raw[:40]!r}."]})
    if value < minimum:
        raise exceptions.ValidationError({name: [f"Must be at least {minimum}."]})
    if value > maximum:
        raise exceptions.ValidationError({name: [f"Must be at most {maximum}."]})
    return value


def query_float(request, name: str) -> float | None:
    """Return the finite number query parameter ``name`` (None when absent); a 400 naming it otherwise."""
    raw = _params(request).get(name)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise exceptions.ValidationError({name: [f"Must be a number, not {raw[:40]!r}."]}) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise exceptions.ValidationError({name: ["Must be a finite number."]})
    return value


def query_choice(request, name: str, choices) -> str | None:
    """Return query parameter ``name`` when it is one of ``choices`` (None when absent); a 400 otherwise."""
    raw = _params(request).get(name)
    if raw in (None, ""):
        return None
    if raw not in choices:
        raise exceptions.ValidationError({name: [f"Must be one of {', '.join(choices)}."]})
    return raw


def query_bool(request, name: str) -> bool | None:
    """Return query parameter ``name`` as a boolean (``true``/``false``/``1``/``0``; None when absent)."""
    raw = _params(request).get(name)
    if raw in (None, ""):
        return None
    value = {"true": True, "1": True, "false": False, "0": False}.get(raw.lower())
    if value is None:
        raise exceptions.ValidationError({name: ["Must be true or false."]})
    return value


