"""Request checks that hold for every page and endpoint."""

from django.http import HttpResponseBadRequest, JsonResponse
from django.utils.html import escape


class RefuseNullBytesInQueryMiddleware:
    """Answer 400 when a query parameter holds a NUL character.

    Form and serializer fields already refuse NUL in bodies (Django's and DRF's
    ``ProhibitNullCharactersValidator``), but query parameters reach lookups unchecked and
    PostgreSQL rejects NUL in text, which would surface as a 500. API paths get the API's
    error shape ``{"code", "detail", "field"}``; pages get the message HTML-escaped (the
    parameter name is the sender's text and must never reach the page as markup).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                message = f"Query parameter '{name.replace(chr(0), '')}' contains a NUL character; remove it."
                if request.path.startswith("/api/"):
                    return JsonResponse({"code": "null_character", "detail": message, "field": name}, status=400)
                return HttpResponseBadRequest(escape(message))
        return self.get_response(request)
