"""A round's export with its media files beside it, one zip per media type (``tasks.data.media``:
``images``, ``audio``): ``<name>/<name>.jsonl`` and ``<name>/<folder>/<sha256>.<ext>``, the stored
files (cleaned images, clips as uploaded in 16-bit FLAC) that the lines name, each once, so that
``<folder>/<hash>.<ext>`` beside the JSONL opens the file of every line. Only the task's own files
named by the exported examples are in it: no other round's, no context without an example.

The lines are the round's JSONL export (``validation.export.export_lines``, which names each media
context by its sha256 in ``context.data``), or, for a kind whose model generates images
(``spec.generates_images``: text-to-image red-teaming), one record per example with its prompt, its
generated images and their validated judgments (``validation.image_judgments.export_records``).

The zip is the same bytes for the same content (every member dated ``ZIP_DATE``), so its sha256,
stated in its Croissant description (``validation.croissant.media_export_croissant``), holds for
every download of it. Media files are stored uncompressed (they are compressed formats already).
"""

from __future__ import annotations

import json
import tempfile
import zipfile

from annotation.models import Example
from tasks.data.media import MediaType
from tasks.loop.artefacts import storage
from validation.export import export_lines
from validation.image_judgments import export_records

SPOOL_BYTES = 32 * 1024 * 1024
"""Zips up to this size are built in memory, larger ones in a temporary file."""
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
"""The date of every member: the earliest a zip holds, so that the same content gives the same bytes."""


def context_hashes(rounds, media: MediaType) -> set[str]:
    """The sha256 values that the ``media`` context fields of the examples of ``rounds`` (one task's) hold."""
    fields = media.context_fields(rounds[0].task.config or {})
    hashes = set()
    if fields:
        for data in Example.objects.filter(round__in=rounds).values_list("context__data", flat=True).distinct():
            hashes.update(str(data.get(name)) for name in fields if (data or {}).get(name))
    return hashes


def _lines_and_files(rounds, media: MediaType) -> tuple:
    """The JSONL chunks (bytes) of ``rounds`` and the ``media`` files they name (``MediaFile``, hash order)."""
    task = rounds[0].task
    if task.spec.generates_images:
        records = [record for round in rounds for record in export_records(round)]
        hashes = {image["sha256"] for record in records for image in record["images"]}
        lines = ((json.dumps(record, ensure_ascii=False) + "\n").encode() for record in records)
        return lines, media.files(task, hashes)
    return export_lines(rounds), media.files(task, context_hashes(rounds, media))


def _member(path: str, compress_type: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
    info.compress_type = compress_type
    info.external_attr = 0o644 << 16
    return info


def export_zip(rounds, media: MediaType, *, name: str):
    """Return a file object (at position 0) of the zip described in the module docstring for the
    examples of ``rounds`` (one task's, at least one) and their ``media`` files; ``name`` is its
    folder (``<task>-r<n>``). Raises ``FileNotFoundError`` when a file is missing from the storage."""
    rounds = list(rounds)
    lines, files = _lines_and_files(rounds, media)
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    store = storage()
    with zipfile.ZipFile(out, "w") as archive:
        with archive.open(_member(f"{name}/{name}.jsonl", zipfile.ZIP_DEFLATED), "w") as jsonl:
            for chunk in lines:
                jsonl.write(chunk)
        for file in files:
            member = _member(f"{name}/{media.folder}/{file.name}", zipfile.ZIP_STORED)
            with store.open(file.stored, "rb") as source, archive.open(member, "w") as target:
                while block := source.read(1024 * 1024):
                    target.write(block)
    out.seek(0)
    return out
