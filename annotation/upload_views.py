"""The write page's "use my own image" and "use my own clip" forms (``annotation.image_uploads``,
``annotation.audio_uploads``)."""

from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_POST

from annotation import audio_uploads, image_uploads
from annotation.htmx_views import (
    _active_task,
    _annotator_page,
    _problem,
    _render_workspace,
)
from dynabench.errors import FieldErrors, RuleError
from tasks.models import Context


def _use_own(request, code, add_context, field: str, done: str):
    """Add the file posted as ``field`` with ``add_context``; answer with the workspace on its
    context saying so (``done``), or the current one (``current``: the context shown) saying why it
    was refused (400)."""
    task = _active_task(code)
    try:
        context = add_context(user=request.user, task=task, file=request.FILES.get(field))
    except FieldErrors as refused:
        current = request.POST.get("current", "")
        shown = get_object_or_404(Context, pk=int(current), round__task=task) if current.isdigit() else None
        message = "; ".join(m for messages in refused.errors.values() for m in messages)
        if shown is None:
            return _problem(message, status=400)
        return _render_workspace(request, task, context=shown, notice=message, status=400)
    except RuleError as refused:
        return _problem(refused.message, status=refused.status_code)
    return _render_workspace(request, task, context=context, notice=done)


@require_POST
@_annotator_page
def upload_image(request, code):
    """POST ``image`` (a file) and ``current`` (the context shown): the workspace on the new image's
    context, or the current workspace again saying why the image was refused (400)."""
    return _use_own(request, code, image_uploads.add_image_context, "image",
                    "Your image is the context now: write your example about it below.")


@require_POST
@_annotator_page
def upload_audio(request, code):
    """POST ``clip`` (an audio file, or the page's recording as WAV) and ``current``: the workspace on
    the new clip's context, or the current workspace again saying why the clip was refused (400)."""
    return _use_own(request, code, audio_uploads.add_audio_context, "clip",
                    "Your clip is the context now: listen to it and write your example below.")
