"""The media files (images, audio clips) that a release's items name, written once each beside the
data: ``images/<sha256>.<ext>``, ``audio/<sha256>.flac`` (``tasks.data.media``: which context fields
hold media comes from the task's config). A media column's value in the JSONL and Parquet files is
that relative path; in Parquet it is a Hugging Face ``Image`` or ``Audio`` value (the file's bytes
and that path), so ``datasets`` decodes it without the files beside it."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.files.storage import default_storage
from django.db.models.fields.json import KT

from tasks.data.media import MEDIA
from tasks.models import Dataset, DatasetItem, Task


#: The Hugging Face ``datasets`` feature of each media type's column in Parquet (by its folder).
FEATURES = {"images": "Image", "audio": "Audio"}


@dataclass(frozen=True)
class ReleaseMedia:
    """``paths``: ``{sha256: path in the release}``; ``stored``: ``{sha256: name in storage}``;
    ``columns``: ``{media column name: its Hugging Face feature type}`` (``Image``, ``Audio``);
    ``files``: ``[(name in storage, path in the release, format)]``, each file once, in path order."""

    paths: dict[str, str]
    stored: dict[str, str]
    columns: dict[str, str]
    files: list[tuple[str, str, str]]

    def read(self, sha256: str) -> bytes | None:
        """The stored bytes of the media file ``sha256`` (None: no such file of the task)."""
        name = self.stored.get(sha256)
        if name is None:
            return None
        with default_storage.open(name, "rb") as handle:
            return handle.read()


def release_media(task: Task, datasets: list[Dataset], columns: list[dict]) -> ReleaseMedia:
    """The media of ``datasets``' items: for every input column that is one of the task's media
    context fields, the task's own stored files its values name (hashes of no stored file are left as they are)."""
    paths: dict[str, str] = {}
    stored: dict[str, str] = {}
    names: dict[str, str] = {}
    files: dict[str, tuple[str, str, str]] = {}
    for media in MEDIA.values():
        fields = set(media.context_fields(task.config or {}))
        for column in columns:
            if column["source"] != "input" or column["key"] not in fields:
                continue
            names[column["name"]] = FEATURES[media.folder]
            hashes = (DatasetItem.objects.filter(dataset__in=datasets).annotate(value=KT(f"input__{column['key']}"))
                      .values_list("value", flat=True).distinct())
            for found in media.files(task, [h for h in hashes if h]):
                path = f"{media.folder}/{found.name}"
                paths[found.sha256] = path
                stored[found.sha256] = found.stored
                files[path] = (found.stored, path, found.ext)
    return ReleaseMedia(paths, stored, names, [files[p] for p in sorted(files)])
