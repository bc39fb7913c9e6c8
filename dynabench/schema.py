"""The OpenAPI schema generator (``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``): drf-spectacular plus error answers."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    """The shape of every error answer (see ``exception_handler``)."""

    code = serializers.CharField(help_text="A stable, machine-readable error code, e.g. `own_example`.")
    detail = serializers.CharField(help_text="What went wrong and what to fix, in words.")
    field = serializers.CharField(required=False, help_text="The (first) input field at fault.")
    errors = serializers.DictField(required=False, help_text="Every input field at fault with its messages.")


_ERROR_CODES = {
    "400": "Bad input: the message says what to fix.",
    "401": "Missing or invalid credentials (send `Authorization: Token <key>`).",
    "403": "Not allowed for this user or object.",
    "404": "No such object, or not visible to this user.",
    "429": "Rate limit or daily cap reached; see `Retry-After`.",
}
_BODY_ERROR_CODES = {
    "413": "The request body is too large.",
    "415": "Unsupported content type.",
}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's ``AutoSchema`` plus the error answers (``ErrorSerializer``) an operation can give."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        codes = dict(_ERROR_CODES)
        if self.method in ("POST", "PUT", "PATCH"):
            codes.update(_BODY_ERROR_CODES)
        for code, description in codes.items():
            if code not in responses:
                responses[code] = {
                    **self._get_response_for_code(ErrorSerializer, code, direction=direction),
                    "description": description,
                }
        return responses


IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False,
    description="One-time key of this submission (8-64 letters, digits, _ . : -, e.g. a UUID). A repeat with the same "
    "key returns the first result (200, `Idempotent-Replayed: true`) and writes nothing (dynabench/idempotency.py).",
)
"""The ``Idempotency-Key`` header of the endpoints that create examples and validations."""
