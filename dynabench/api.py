"""REST API plumbing shared by every app's ``api_views``: the exception handler."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from dynabench.errors import RuleError


def exception_handler(exc, context):
    """Map ``RuleError`` to its status with ``{"code", "detail", "field"}``; Django's
    ``ValidationError`` to a 400 keyed by field; everything else to DRF's default."""
    if isinstance(exc, RuleError):
        return Response(exc.as_dict(), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        return Response({"code": "invalid", **detail}, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
