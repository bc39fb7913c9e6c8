"""Request checks that hold for every page and endpoint."""

from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.utils.html import escape

from dynabench.jsonbounds import refused_character


class RefuseNullBytesInQueryMiddleware:
    """Answer 404 when the path holds a NUL character (or a lone surrogate), 400 when a query
    parameter does.

    No object of the platform is named with NUL (PostgreSQL cannot store it), so a path such as
    ``/users/%00/`` or a console person page with ``%00`` names nothing: it is a 404 on every
    database, where the look-up used to fail on PostgreSQL with a 500.

    Form and serializer fields already refuse NUL in bodies (Django's and DRF's
    ``ProhibitNullCharactersValidator``), but query parameters reach lookups unchecked and
    PostgreSQL rejects NUL in text, which would surface as a 500. API paths get the API's
    error shape ``{"code", "detail", "field"}``; pages get the message HTML-escaped (the
    parameter name is the sender's text and must never reach the page as markup).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if refused_character(request.path_info):
            if request.path_info.startswith("/api/"):
                return JsonResponse({"code": "not_found", "detail": "Not found: the path holds a NUL character."}, status=404)
            raise Http404("No such page: the path holds a NUL character.")
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                message = f"Query parameter '{name.replace(chr(0), '')}' contains a NUL character; remove it."
                if request.path.startswith("/api/"):
                    return JsonResponse({"code": "null_character", "detail": message, "field": name}, status=400)
                return HttpResponseBadRequest(escape(message))
        return self.get_response(request)
