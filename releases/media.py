"""The media files (images, audio clips) that a release's items name, written once each beside the
data: ``images/<sha256>.<ext>``, ``audio/<sha256>.flac`` (``tasks.data.media``: which context fields
hold media comes from the task's config). A media column's value in the JSONL and Parquet files is
that relative path."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.fields.json import KT

from tasks.data.media import MEDIA
from tasks.models import Dataset, DatasetItem, Task


@dataclass(frozen=True)
class ReleaseMedia:
    """``paths``: ``{sha256: path in the release}``; ``columns``: the names of the media columns;
    ``files``: ``[(name in storage, path in the release, format)]``, each file once, in path order."""

    paths: dict[str, str]
    columns: frozenset[str]
    files: list[tuple[str, str, str]]


def release_media(task: Task, datasets: list[Dataset], columns: list[dict]) -> ReleaseMedia:
    """The media of ``datasets``' items: for every input column that is one of the task's media
    context fields, the task's own stored files its values name (hashes of no stored file are left as they are)."""
    paths: dict[str, str] = {}
    names: set[str] = set()
    files: dict[str, tuple[str, str, str]] = {}
    for media in MEDIA.values():
        fields = set(media.context_fields(task.config or {}))
        for column in columns:
            if column["source"] != "input" or column["key"] not in fields:
                continue
            names.add(column["name"])
            hashes = (DatasetItem.objects.filter(dataset__in=datasets).annotate(value=KT(f"input__{column['key']}"))
                      .values_list("value", flat=True).distinct())
            for found in media.files(task, [h for h in hashes if h]):
                path = f"{media.folder}/{found.name}"
                paths[found.sha256] = path
                files[path] = (found.stored, path, found.ext)
    return ReleaseMedia(paths, frozenset(names), [files[p] for p in sorted(files)])
