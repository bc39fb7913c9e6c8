"""The media files a task's contexts name by content hash, one description per media type, so that
what carries them beside the data (the round's zip export, its Croissant description) is written once:

- ``images``: context fields of ``"type": "image"``, ``ContextImage`` records, stored as
  ``images/<sha256>.<ext>`` (``tasks.data.image_files``), PNG, JPEG, WebP or GIF;
- ``audio``: context fields of ``"type": "audio"``, ``ContextAudio`` records, stored as
  ``audio/<sha256>.flac`` (``tasks.data.audio_files``: the clip as uploaded, 16-bit FLAC).

A media type is keyed by its folder name, which is also its folder beside the JSONL in an export
and its word in the export's URL (``export-with-<folder>.zip``). Which fields hold media comes from
the task's config (its context field types), which each kind's spec checks (``config_errors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tasks.data import audio_files, image_files
from tasks.data.audio import audio_context_fields
from tasks.data.images import image_context_fields
from tasks.models import ContextAudio, ContextImage, Task


@dataclass(frozen=True)
class MediaFile:
    """One stored media file: ``sha256`` (its name), ``ext`` (file extension), ``content_type``
    (its MIME type, also its Croissant ``encodingFormat``) and ``stored`` (its name in the default storage)."""

    sha256: str
    ext: str
    content_type: str
    stored: str

    @property
    def name(self) -> str:
        """The file's name beside the JSONL in its folder: ``<sha256>.<ext>``."""
        return f"{self.sha256}.{self.ext}"


@dataclass(frozen=True)
class MediaType:
    """A media type: ``folder`` (its key and its folder in an export), ``data_type`` (the Croissant
    data type of its content, ``sc:ImageObject`` or ``sc:AudioObject``), ``context_fields(config)``
    (the names of the config's context fields that hold a file's sha256), ``model`` (the per-task
    record of a stored file), ``ext_column`` (the record's column holding the extension; None: always
    ``ext``), ``stored_name(sha256, ext)`` and ``content_types`` (``{ext: MIME type}``)."""

    folder: str
    data_type: str
    context_fields: Callable[[dict], list[str]]
    model: type
    ext_column: str | None
    ext: str
    stored_name: Callable[[str, str], str]
    content_types: dict[str, str]

    def files(self, task: Task, hashes) -> list[MediaFile]:
        """The stored files of this type among ``hashes`` (sha256 strings) that are ``task``'s own
        records, in hash order; hashes of other tasks' files or of none are left out."""
        columns = ["sha256", self.ext_column] if self.ext_column else ["sha256"]
        rows = self.model.objects.filter(task=task, sha256__in=set(hashes)).order_by("sha256").values_list(*columns)
        found = [(row[0], row[1] if self.ext_column else self.ext) for row in rows]
        return [MediaFile(sha256, ext, self.content_types[ext], self.stored_name(sha256, ext)) for sha256, ext in found]


MEDIA: dict[str, MediaType] = {
    "images": MediaType(
        folder="images", data_type="sc:ImageObject", context_fields=image_context_fields, model=ContextImage,
        ext_column="ext", ext="", stored_name=image_files.stored_name, content_types=image_files.CONTENT_TYPES,
    ),
    "audio": MediaType(
        folder="audio", data_type="sc:AudioObject", context_fields=audio_context_fields, model=ContextAudio,
        ext_column=None, ext="flac", stored_name=lambda sha256, ext: audio_files.stored_name(sha256),
        content_types={"flac": audio_files.CONTENT_TYPE},
    ),
}
"""The media types, by folder."""


def media_held_by(task: Task) -> list[MediaType]:
    """The media types of which ``task`` holds stored files (uploaded contexts, or a generator's images)."""
    return [media for media in MEDIA.values() if media.model.objects.filter(task=task).exists()]
