"""Serving a task's context images, their thumbnails (``tasks.data.images``) and its audio clips
(``tasks.data.audio``) to the people who may see the task. The name in the URL is the file's
sha256: it carries no label."""

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from tasks.access import visible_tasks
from tasks.data import audio, images
from tasks.models import ContextAudio, ContextImage


def _serve(request, code: str, sha256: str, *, model, open_file, what: str, etag_suffix: str = ""):
    """The stored file of ``model`` (``ContextImage`` or ``ContextAudio``) with this sha256, opened
    by ``open_file(record) -> (file, content type)``, if it belongs to task ``code`` and the user
    may see the task; else 404 (``what`` names the file in the message)."""
    task = get_object_or_404(visible_tasks(request.user), code=code)
    record = get_object_or_404(model, task=task, sha256=sha256.lower())
    try:
        fh, content_type = open_file(record)
    except FileNotFoundError:
        raise Http404(f"the {what} is not in the storage") from None
    response = FileResponse(fh, content_type=content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"  # content-addressed
    response["ETag"] = f'"{record.sha256}{etag_suffix}"'
    response["Content-Disposition"] = "inline"
    return response


@require_GET
def image(request, code, sha256):
    """The cleaned image with this sha256, if it belongs to task ``code`` and the user may see the task; else 404."""
    return _serve(request, code, sha256, model=ContextImage, open_file=lambda r: images.open_image(r, thumbnail=False), what="image")


@require_GET
def thumbnail(request, code, sha256):
    """The image's JPEG thumbnail (at most ``tasks.data.images.THUMB_SIZE``); 404 as ``image``."""
    return _serve(request, code, sha256, model=ContextImage, open_file=lambda r: images.open_image(r, thumbnail=True),
                  what="image", etag_suffix="-t")


@require_GET
def clip(request, code, sha256):
    """The stored audio clip (FLAC) with this sha256, if it belongs to task ``code`` and the user may see
    the task; else 404. Browsers play it in an ``<audio controls>`` element."""
    return _serve(request, code, sha256, model=ContextAudio, open_file=audio.open_clip, what="clip")
