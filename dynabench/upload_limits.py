"""Upload size limits enforced while the body arrives, not after it has been received.

Django's upload handling writes a whole file to memory or a temporary file before a view can
look at its size, so a 2 GiB body sent to a route that takes 100 MiB used to be read and
written in full before it was refused. ``UploadLimitMiddleware`` stops it early, on the routes
named in ``settings.UPLOAD_LIMITS`` (``{URL name: name of the setting holding the limit in
bytes}``):

1. a ``Content-Length`` over the limit plus ``MULTIPART_OVERHEAD_BYTES`` is answered 413 at
   once; not one byte of the body is read;
2. otherwise ``LimitedUploadHandler`` goes first among the request's upload handlers and counts
   the file bytes as they arrive; past the limit it stops the upload (the partly written
   temporary file is closed and so deleted, the rest of the body is not read) and the answer
   is 413.

The 413 names the limit: ``{"code": "upload_too_large", "detail", "field": "file"}`` under
``/api/``, a page elsewhere. Views and services still check ``file.size`` for callers that
reach them another way (the admin, management commands, tests).
"""

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import JsonResponse, QueryDict
from django.shortcuts import render
from django.utils.datastructures import MultiValueDict

MULTIPART_OVERHEAD_BYTES = 1024 * 1024
"""What a multipart body may hold besides its files (part headers, boundaries, form fields)."""
UPLOAD_METHODS = frozenset({"POST", "PUT", "PATCH"})


class UploadTooLarge(Exception):
    """An upload passed ``limit`` bytes; ``length`` is the body's declared size when that told."""

    def __init__(self, limit: int, *, length: int | None = None):
        self.limit = limit
        self.length = length
        super().__init__(self.message)

    @property
    def message(self) -> str:
        has = f" (it has {self.length:,} bytes)" if self.length is not None else ""
        return (
            f"This upload is too large{has}: the limit is {self.limit:,} bytes ({_readable(self.limit)}). "
            "Split the file and upload the parts one by one."
        )


def _readable(size: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


class LimitedUploadHandler(FileUploadHandler):
    """Counts the bytes of every file in one request and stops the upload past ``limit``.

    It must come first among ``request.upload_handlers`` so that no later handler stores a
    chunk over the limit. Stopping raises ``StopUpload(connection_reset=True)``: Django's
    parser closes the files in progress (a temporary file is deleted on close) and reads no
    more of the body; ``upload_complete`` then raises ``UploadTooLarge`` for the caller.
    """

    def __init__(self, request, limit: int):
        super().__init__(request)
        self.limit = limit
        self.received = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.exceeded = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size):
        return None

    def upload_complete(self):
        if self.exceeded:
            raise UploadTooLarge(self.limit)


def upload_limit(request) -> int | None:
    """Return the largest upload, in bytes, that the resolved route of ``request`` accepts, or
    None when ``settings.UPLOAD_LIMITS`` does not name the route."""
    match = getattr(request, "resolver_match", None)
    setting = getattr(settings, "UPLOAD_LIMITS", {}).get(match.view_name) if match else None
    return int(getattr(settings, setting)) if setting else None


def too_large_response(request, refused: UploadTooLarge):
    """The 413 answer: the API's error shape under ``/api/``, the ``upload_too_large.html`` page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "upload_too_large", "detail": refused.message, "field": "file"}, status=413)
    return render(request, "upload_too_large.html", {"message": refused.message, "back": request.path}, status=413)


class UploadLimitMiddleware:
    """Refuse uploads over their route's limit while they arrive (see the module docstring).

    Place it before ``CsrfViewMiddleware``, whose ``process_view`` reads the body.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method not in UPLOAD_METHODS:
            return None
        limit = upload_limit(request)
        if limit is None:
            return None
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit + MULTIPART_OVERHEAD_BYTES:
            return too_large_response(request, UploadTooLarge(limit, length=length))
        if request.content_type != "multipart/form-data":
            return None
        request.upload_handlers.insert(0, LimitedUploadHandler(request, limit))
        try:
            request.POST  # parse now, counting, before any view or middleware reads the body
        except UploadTooLarge as refused:
            request._post, request._files = QueryDict(), MultiValueDict()
            return too_large_response(request, refused)
        return None
