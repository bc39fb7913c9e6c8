"""``/tasks/<code>/rounds/<n>/export-with-images.zip``: the round's export with its images as files
beside the JSONL (``validation.image_export``), for the task's owners."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse

from validation.htmx_views import _owner_only, _round, _task
from validation.image_export import export_zip


@login_required
def export_round_with_images(request, code, number):
    """Owners: a zip of ``<task>-r<n>/<task>-r<n>.jsonl`` and ``<task>-r<n>/images/<sha256>.<ext>``; 403 for others."""
    task = _task(code)
    if (refused := _owner_only(request, task)) is not None:
        return refused
    round = _round(task, number)
    name = f"{task.code}-r{round.number}"
    return FileResponse(export_zip([round], name=name), as_attachment=True, filename=f"{name}.zip", content_type="application/zip")
