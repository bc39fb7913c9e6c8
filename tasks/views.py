"""Serving a task's context images and their thumbnails (``tasks.data.images``) to the people who
may see the task. The name in the URL is the image's sha256: it carries no label."""

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from tasks.data import audio, images
from tasks.access import visible_tasks
from tasks.models import ContextAudio, ContextImage


def _serve(request, code: str, sha256: str, *, thumbnail: bool):
    task = get_object_or_404(visible_tasks(request.user), code=code)
    record = get_object_or_404(ContextImage, task=task, sha256=sha256.lower())
    try:
        fh, content_type = images.open_image(record, thumbnail=thumbnail)
    except FileNotFoundError:
        raise Http404("the image is not in the storage") from None
    response = FileResponse(fh, content_type=content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"  # content-addressed
    response["ETag"] = f'"{record.sha256}{"-t" if thumbnail else ""}"'
    response["Content-Disposition"] = "inline"
    return response


@require_GET
def image(request, code, sha256):
    """The cleaned image with this sha256, if it belongs to task ``code`` and the user may see the task; else 404."""
    return _serve(request, code, sha256, thumbnail=False)


@require_GET
def thumbnail(request, code, sha256):
    """The image's JPEG thumbnail (at most ``tasks.data.images.THUMB_SIZE``); 404 as ``image``."""
    return _serve(request, code, sha256, thumbnail=True)


@require_GET
def clip(request, code, sha256):
    """The stored audio clip (FLAC) with this sha256, if it belongs to task ``code`` and the user may see
    the task; else 404. Browsers play it in an ``<audio controls>`` element."""
    task = get_object_or_404(visible_tasks(request.user), code=code)
    record = get_object_or_404(ContextAudio, task=task, sha256=sha256.lower())
    try:
        fh, content_type = audio.open_clip(record)
    except FileNotFoundError:
        raise Http404("the clip is not in the storage") from None
    response = FileResponse(fh, content_type=content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"  # content-addressed
    response["ETag"] = f'"{record.sha256}"'
    response["Content-Disposition"] = "inline"
    return response
