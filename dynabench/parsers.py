"""The API's JSON parser with a body size cap and a nesting limit (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``)."""

from django.conf import settings
from rest_framework import exceptions, parsers, status
from rest_framework.settings import api_settings
from rest_framework.utils import json as drf_json

from dynabench.jsonbounds import JSONTooDeep, loads_bounded


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser that refuses bodies over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with a 413
    and bodies nested deeper than ``dynabench.jsonbounds.MAX_JSON_DEPTH`` with a 400 (``parse_error``)."""

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
        except ValueError as error:
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
