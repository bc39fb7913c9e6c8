"""A round's export with its images beside it: one zip holding ``<name>/<name>.jsonl`` (the lines of
``selectors.export_lines``, which name each image by its sha256 in ``context.data`` and ``input``)
and ``<name>/images/<sha256>.<ext>``, the cleaned image files those hashes name (``tasks.images``),
so that ``images/<hash>.<ext>`` beside the JSONL opens the image of every line. Images are stored
uncompressed in the zip (they are compressed formats already)."""

from __future__ import annotations

import tempfile
import zipfile

from annotation.models import Example
from tasks.artefacts import storage
from tasks.images import image_context_fields, stored_name
from tasks.models import ContextImage
from validation.selectors import export_lines

SPOOL_BYTES = 32 * 1024 * 1024
"""Zips up to this size are built in memory, larger ones in a temporary file."""


def round_images(rounds) -> list[ContextImage]:
    """The images named by the image context fields of the examples of ``rounds`` (one task's), in hash order."""
    rounds = list(rounds)
    if not rounds:
        return []
    task = rounds[0].task
    fields = image_context_fields(task.config)
    if not fields:
        return []
    hashes = set()
    for data in Example.objects.filter(round__in=rounds).values_list("context__data", flat=True).distinct():
        hashes.update(str(data.get(name)) for name in fields if (data or {}).get(name))
    return list(ContextImage.objects.filter(task=task, sha256__in=hashes).order_by("sha256"))


def export_zip(rounds, *, name: str):
    """Return a file object (at position 0) of the zip described in the module docstring for the
    examples of ``rounds``; ``name`` is its folder (``<task>-r<n>``). Raises ``FileNotFoundError``
    when an image's file is missing from the storage."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    store = storage()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(f"{name}/{name}.jsonl", "w") as jsonl:
            for chunk in export_lines(rounds):
                jsonl.write(chunk)
        for image in round_images(rounds):
            member = f"{name}/images/{image.sha256}.{image.ext}"
            with store.open(stored_name(image.sha256, image.ext), "rb") as source, \
                    archive.open(zipfile.ZipInfo(member, date_time=image.created_at.timetuple()[:6]), "w") as target:
                while block := source.read(1024 * 1024):
                    target.write(block)
    out.seek(0)
    return out
