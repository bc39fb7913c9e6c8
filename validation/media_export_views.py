"""``/tasks/<code>/rounds/<n>/export-with-<folder>.zip``: the round's export with its media files
(``images`` or ``audio``, ``tasks.data.media``) beside the JSONL (``validation.media_export``), and
``croissant-with-<folder>.json``, its Croissant description; for the task's owners, as the JSONL export."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.urls import reverse

from tasks.data.croissant import dataset_license_of_task
from tasks.data.media import MEDIA
from validation.croissant import media_export_croissant
from validation.htmx_views import _owner_only, _round, _task, croissant_response
from validation.media_export import export_zip


def _media(name: str):
    if name not in MEDIA:
        raise Http404(f"No export with '{name}': one of {', '.join(MEDIA)}.")
    return MEDIA[name]


@login_required
def export_round_with_media(request, code, number, media):
    """Owners: a zip of ``<task>-r<n>/<task>-r<n>.jsonl`` and ``<task>-r<n>/<folder>/<sha256>.<ext>``;
    403 for others (login first), 404 for a media folder other than ``images`` or ``audio``."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    kind = _media(media)
    round = _round(task, number)
    name = f"{task.code}-r{round.number}"
    return FileResponse(export_zip([round], kind, name=name), as_attachment=True, filename=f"{name}.zip",
                        content_type="application/zip")


@login_required
def round_media_croissant(request, code, number, media):
    """Owners: the Croissant JSON-LD of ``export-with-<folder>.zip`` (``validation.croissant.media_export_croissant``),
    to save beside the zip; 403 for others, 404 when the task's contexts hold no file of that media type."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    kind = _media(media)
    if not kind.context_fields(task.config or {}):
        raise Http404(f"Task '{task.code}' has no context field of {media}.")
    round = _round(task, number)
    body = media_export_croissant(
        round, kind,
        export_url=request.build_absolute_uri(reverse("validation:export_round_media", args=[task.code, round.number, media])),
        page_url=request.build_absolute_uri(reverse("validation:round", args=[task.code, round.number])),
        license=dataset_license_of_task(task),
    )
    return croissant_response(body, f"{task.code}-r{round.number}-{media}.croissant.json")
