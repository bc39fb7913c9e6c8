"""The API's JSON parser with a body size cap and a nesting limit (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``)."""

from django.conf import settings
from rest_framework import exceptions, parsers, status
from rest_framework.settings import api_settings
from rest_framework.utils import json as drf_json

from dynabench.jsonbounds import JSONBadCharacter, JSONNumberTooLarge, JSONTooDeep, loads_bounded


class BadCharacter(exceptions.ParseError):
    """A string of the body holds NUL or a lone surrogate, which the database cannot store (400
    ``null_character``, ``field`` naming the innermost key)."""

    default_code = "null_character"

    def __init__(self, detail, *, field: str | None = None):
        super().__init__(detail)
        self.field = field


class NumberTooLarge(exceptions.ParseError):
    """An integer past a signed 64-bit integer (or NaN/Infinity): 400 ``parse_error`` with ``field``
    naming the innermost key holding it."""

    def __init__(self, detail, *, field: str | None = None):
        super().__init__(detail)
        self.field = field


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser through the one bounded reader (``dynabench.jsonbounds.loads_bounded``):
    bodies over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` are a 413; bodies nested deeper than ``MAX_JSON_DEPTH``,
    integers past a signed 64-bit integer, NaN/Infinity a 400 ``parse_error`` naming the problem; a
    string holding NUL or a lone surrogate a 400 ``null_character`` naming its field."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        parser_context = parser_context or {}
        request = parser_context.get("request")
        length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if limit is not None and length > limit:
            raise RequestTooLarge(f"The JSON body is {length} bytes; the limit is {limit} bytes.")
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as error:
            raise exceptions.ParseError(f"JSON parse error - the body is not {encoding} text ({error.reason}).") from None
        parse_constant = drf_json.strict_constant if api_settings.STRICT_JSON else None
        try:
            return loads_bounded(text, parse_constant=parse_constant)
        except JSONTooDeep as error:
            raise exceptions.ParseError(f"JSON parse error - {error}; flatten the body.") from None
        except JSONNumberTooLarge as error:
            raise NumberTooLarge(f"JSON parse error - {error}{f' (in {error.field})' if error.field else ''}.", field=error.field) from None
        except JSONBadCharacter as error:
            raise BadCharacter(f"The body holds {error}; remove it.", field=error.field) from None
        except ValueError as error:
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
