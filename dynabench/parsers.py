"""The API's JSON parser with a body size cap (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``)."""

from django.conf import settings
from rest_framework import exceptions, parsers, status


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser that refuses bodies over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with a 413."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if limit is not None and length > limit:
            raise RequestTooLarge(f"The JSON body is {length} bytes; the limit is {limit} bytes.")
        return super().parse(stream, media_type, parser_context)
