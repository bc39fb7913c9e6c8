"""A round's export with its images beside it, one zip for every task with images: ``<name>/<name>.jsonl``
and ``<name>/images/<sha256>.<ext>``, the cleaned image files (``tasks.data.images``) the lines name, so
that ``images/<hash>.<ext>`` beside the JSONL opens the image of every line. Images are stored
uncompressed in the zip (they are compressed formats already).

The lines are the round's JSONL export (``validation.export.export_lines``, which names each image context by
its sha256 in ``context.data`` and ``input``), or, for a kind whose model generates images
(``spec.generates_images``: text-to-image red-teaming), one record per example with its prompt, its
generated images and their validated judgments (``validation.image_judgments.export_records``)."""

from __future__ import annotations

import json
import tempfile
import zipfile

from annotation.models import Example
from tasks.loop.artefacts import storage
from tasks.data.image_files import stored_name
from tasks.data.images import image_context_fields
from tasks.models import ContextImage
from validation.image_judgments import export_records
from validation.export import export_lines

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


def _lines_and_images(rounds) -> tuple:
    """The JSONL chunks (bytes) of ``rounds`` and the ``(sha256, ext)`` of the images they name."""
    task = rounds[0].task
    if task.spec.generates_images:
        records = [record for round in rounds for record in export_records(round)]
        images = {(image["sha256"], image["file"].rsplit(".", 1)[-1]) for record in records for image in record["images"]}
        lines = ((json.dumps(record, ensure_ascii=False) + "\n").encode() for record in records)
        return lines, sorted(images)
    return export_lines(rounds), [(image.sha256, image.ext) for image in round_images(rounds)]


def export_zip(rounds, *, name: str):
    """Return a file object (at position 0) of the zip described in the module docstring for the
    examples of ``rounds`` (one task's, at least one); ``name`` is its folder (``<task>-r<n>``).
    Raises ``FileNotFoundError`` when an image's file is missing from the storage."""
    rounds = list(rounds)
    lines, images = _lines_and_images(rounds)
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    store = storage()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(f"{name}/{name}.jsonl", "w") as jsonl:
            for chunk in lines:
                jsonl.write(chunk)
        for sha256, ext in images:
            info = zipfile.ZipInfo(f"{name}/images/{sha256}.{ext}")
            info.compress_type = zipfile.ZIP_STORED
            with store.open(stored_name(sha256, ext), "rb") as source, archive.open(info, "w") as target:
                while block := source.read(1024 * 1024):
                    target.write(block)
    out.seek(0)
    return out
