"""Writing a release's data files: for each round and split, one JSON Lines file and one Parquet
file with the schema the task's kind declares (``TaskKindSpec.release_columns``), stored through
Django's default storage and never written again.

Columns: ``uid`` (string), ``round`` (int32), ``split`` (string), ``tag`` (string), then the kind's
columns: ``string`` as string, ``label`` as a Hugging Face ``ClassLabel`` (int64 index into the
task's labels in Parquet, the label's name in JSONL; -1 / null for an item without one), ``json``
as JSON text. The Parquet schema carries the Hugging Face ``datasets`` features under the
``huggingface`` metadata key, so ``datasets.load_dataset("parquet", ...)`` gives ``ClassLabel``
names without a loading script.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from itertools import repeat
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files import File
from django.core.files.storage import default_storage

from releases.selectors import Group, group_rows

#: Rows per Parquet row group (and per batch held in memory while writing).
BATCH_ROWS = 50_000
FIXED = [("uid", pa.string(), {"dtype": "string", "_type": "Value"}),
         ("round", pa.int32(), {"dtype": "int32", "_type": "Value"}),
         ("split", pa.string(), {"dtype": "string", "_type": "Value"}),
         ("tag", pa.string(), {"dtype": "string", "_type": "Value"})]


class StoredFileExists(RuntimeError):
    """A release file's name is already taken in storage: release files are never overwritten."""


MEDIA_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
"""The Parquet type of a media column: Hugging Face ``datasets``' storage of ``Image`` and ``Audio``."""


def features(columns: list[dict], media_columns: dict[str, str] | None = None) -> dict:
    """The Hugging Face ``datasets`` features (``Features.to_dict()`` shape) of a release's files;
    ``media_columns``: ``{column name: "Image" | "Audio"}``."""
    out = {name: feature for name, _, feature in FIXED}
    for column in columns:
        if column["name"] in (media_columns or {}):
            out[column["name"]] = {"_type": media_columns[column["name"]]}
        elif column["type"] == "label":
            out[column["name"]] = {"names": list(column["names"]), "_type": "ClassLabel"}
        else:
            out[column["name"]] = {"dtype": "string", "_type": "Value"}
    return out


def arrow_schema(columns: list[dict], media_columns: dict[str, str] | None = None) -> pa.Schema:
    """The Parquet schema of a release's files, with ``features`` as ``huggingface`` metadata."""
    def kind(column):
        if column["name"] in (media_columns or {}):
            return MEDIA_TYPE
        return pa.int64() if column["type"] == "label" else pa.string()

    fields = [pa.field(name, kind_) for name, kind_, _ in FIXED] + [pa.field(c["name"], kind(c)) for c in columns]
    metadata = {"huggingface": json.dumps({"info": {"features": features(columns, media_columns)}})}
    return pa.schema(fields, metadata=metadata)


def _column_values(column: dict, raw: tuple, media=None) -> tuple[list, list]:
    """``(JSONL values, Parquet values)`` of one kind column over a batch of raw database values
    (a media column, ``media`` given: its file's path in the release; in Parquet ``{"bytes", "path"}``,
    each file read once per batch)."""
    if media is not None:
        paths = [media.paths.get(value, value) for value in raw]
        content = {sha: media.read(sha) for sha in set(raw) if sha}
        return paths, [{"bytes": content.get(sha), "path": path} for sha, path in zip(raw, paths)]
    if column["type"] == "label":
        index = {name: i for i, name in enumerate(column["names"])}
        return list(raw), [index.get(value, -1) for value in raw]
    if column["type"] == "json":
        encoded = [None if v is None else orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode() for v in raw]
        return encoded, encoded
    return list(raw), list(raw)


def write_group(group: Group, columns: list[dict], *, directory: Path, index: dict | None,
                on_rows: Callable[[int], None], media=None) -> list[dict]:
    """Write ``group``'s rows to ``<directory>/<stem>.jsonl`` and ``.parquet`` (local files) and return
    their manifest entries ``{"name", "path", "rows", "round", "split", "format", "size", "sha256"}`` (the
    JSONL's digest taken as it is written). Adds each row's ``(round, split, uid) → target values`` to
    ``index`` when given (the changelog's input); calls ``on_rows(n)`` after each batch of ``n`` rows.
    ``media`` (``releases.media.ReleaseMedia``): its columns hold each file's path in the release (JSONL)
    and its bytes with that path (Parquet, ``Image``/``Audio``) instead of its sha256. Works a batch of
    ``BATCH_ROWS`` at a time, column by column (JSONL lines by orjson: compact, UTF-8, keys in column order)."""
    schema = arrow_schema(columns, media.columns if media else None)
    keys = [name for name, _, _ in FIXED] + [c["name"] for c in columns]
    targets = [i for i, c in enumerate(columns) if c["source"] == "target"]
    jsonl_path = directory / f"{group.stem}.jsonl"
    parquet_path = directory / f"{group.stem}.parquet"
    jsonl_path.parent.mkdir(parents=True, exist_ok=True)
    rows = size = 0
    digest = hashlib.sha256()
    with open(jsonl_path, "wb") as jsonl, pq.ParquetWriter(parquet_path, schema, compression="zstd") as parquet:
        for batch in _batches(group_rows(group, columns), BATCH_ROWS):
            n = len(batch)
            uids, raw_tags, *raw = zip(*batch)
            tags = [t or "" for t in raw_tags]
            rounds, splits = [group.round] * n, [group.split] * n
            values = [_column_values(column, r, media if media and column["name"] in media.columns else None)
                      for column, r in zip(columns, raw)]
            arrays = [list(uids), rounds, splits, tags, *(v[1] for v in values)]
            parquet.write_batch(pa.record_batch([pa.array(a, type=f.type) for a, f in zip(arrays, schema)], schema=schema),
                                row_group_size=BATCH_ROWS)
            lines = zip(uids, rounds, splits, tags, *(v[0] for v in values))
            block = b"".join(orjson.dumps(dict(zip(keys, line)), option=orjson.OPT_APPEND_NEWLINE) for line in lines)
            jsonl.write(block)
            digest.update(block)
            size += len(block)
            if index is not None:
                index.update(zip(zip(rounds, splits, uids), zip(*(values[i][0] for i in targets)) if targets else repeat(())))
            rows += n
            on_rows(n)
    base = {"rows": rows, "round": group.round, "split": group.split}
    parquet_size, parquet_sha256 = file_digest(parquet_path)
    return [{**base, "name": f"{group.stem}.jsonl", "path": str(jsonl_path), "format": "jsonl", "size": size,
             "sha256": digest.hexdigest()},
            {**base, "name": f"{group.stem}.parquet", "path": str(parquet_path), "format": "parquet", "size": parquet_size,
             "sha256": parquet_sha256}]


def _batches(rows: Iterator[tuple], size: int) -> Iterator[list[tuple]]:
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def stream_digest(handle) -> tuple[int, str]:
    """``(size in bytes, sha256 hex)`` of what an open binary file has left, read in 1 MiB blocks."""
    digest, size = hashlib.sha256(), 0
    while block := handle.read(1 << 20):
        digest.update(block)
        size += len(block)
    return size, digest.hexdigest()


def file_digest(path: Path | str) -> tuple[int, str]:
    """``(size in bytes, sha256 hex)`` of a local file."""
    with open(path, "rb") as handle:
        return stream_digest(handle)


def copy_stored(source: str, name: str) -> str:
    """Copy the stored file ``source`` to ``name`` in the default storage and return ``name``; raises
    ``StoredFileExists`` when ``name`` is taken."""
    if default_storage.exists(name):
        raise StoredFileExists(name)
    with default_storage.open(source, "rb") as handle:
        saved = default_storage.save(name, File(handle, name=os.path.basename(name)))
    if saved != name:
        default_storage.delete(saved)
        raise StoredFileExists(name)
    return saved


class _LocalFile(File):
    """A built file that the file-system storage may move into place instead of copying (Django's
    ``FileSystemStorage`` moves a file that has a ``temporary_file_path``; other storages stream it)."""

    def temporary_file_path(self) -> str:
        return self.file.name


def store(local: Path | str, name: str) -> str:
    """Save the local file ``local`` as ``name`` in the default storage and return ``name``. Raises
    ``StoredFileExists`` when ``name`` is taken (a release's files are written once)."""
    if default_storage.exists(name):
        raise StoredFileExists(name)
    with open(local, "rb") as handle:
        saved = default_storage.save(name, _LocalFile(handle, name=os.path.basename(name)))
    if saved != name:  # the storage picked another name: someone wrote ``name`` meanwhile
        default_storage.delete(saved)
        raise StoredFileExists(name)
    return saved


def scratch() -> tempfile.TemporaryDirectory:
    """A local folder for building one release's files before they are stored."""
    return tempfile.TemporaryDirectory(prefix="release-")
