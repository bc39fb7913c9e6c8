"""How a file record becomes a row of the task: a task field reads the file field it is mapped to
(``FileSpec.mapping``), by key first and then as a dotted path into nested JSON (``lookup``); the
row's filters, texts, uid, tag, metadata and image fields (``RowMapper``, ``image_fields``)."""

from __future__ import annotations

import hashlib
import json

from dynabench.errors import RuleError
from tasks.data.images import ImagePaths, ImageRefused
from tasks.data.importers.errors import ImportErrorCode, ImportRowError
from tasks.data.importers.files import FileSpec
from tasks.models import DatasetItem

_TAG_MAX = DatasetItem._meta.get_field("tag").max_length
_UID_MAX = DatasetItem._meta.get_field("uid").max_length


MISSING = object()
"""What ``lookup`` returns for a path the record lacks."""


def lookup(record: dict, path: str):
    """Return ``record[path]``, else the value at dotted ``path``, else ``MISSING`` (the
    mapping rule of every import: a key first, then a path into nested JSON)."""
    if path in record:
        return record[path]
    value = record
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def _as_filter_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class RowMapper:
    """Turns a file record into ``(uid, fields, tag, metadata)`` for one task."""

    def __init__(self, spec: FileSpec, *, text_fields: list[str], optional_fields: list[str], extra_fields: list[str]):
        self.spec = spec
        self.text_fields = text_fields
        known = set(text_fields) | set(optional_fields) | set(extra_fields)
        unknown = sorted(set(spec.mapping) - known)
        if unknown:
            raise RuleError(
                ImportErrorCode.OPTIONS,
                f"--map names unknown task field(s) {', '.join(unknown)}; this import takes {', '.join(sorted(known))}",
            )
        if spec.uid_from not in ("field", "line", "content"):
            raise RuleError(ImportErrorCode.OPTIONS, f"unknown uid source '{spec.uid_from}'")
        self.optional_fields = [f for f in optional_fields if f in spec.mapping]

    def source(self, name: str) -> str:
        return self.spec.mapping.get(name, name)

    def matches(self, line: int, record: dict) -> bool:
        for path, wanted in self.spec.filters.items():
            value = lookup(record, path)
            if value is MISSING:
                raise ImportRowError(line, f"missing field '{path}' (used by --filter)")
            if _as_filter_text(value) != wanted:
                return False
        return True

    def value(self, line: int, record: dict, name: str):
        value = lookup(record, self.source(name))
        if value is MISSING or value is None:
            raise ImportRowError(line, f"missing field '{self.source(name)}' (for {name})")
        return value

    def text(self, line: int, record: dict, name: str) -> str:
        value = self.value(line, record, name)
        if isinstance(value, (dict, list, bool)):
            raise ImportRowError(line, f"field '{self.source(name)}' (for {name}) must be text, found {type(value).__name__}")
        value = str(value)
        if not value.strip():
            raise ImportRowError(line, f"empty text in field '{self.source(name)}' (for {name})")
        return value

    def fields(self, line: int, record: dict) -> dict:
        data = {name: self.text(line, record, name) for name in self.text_fields}
        data.update({name: self.text(line, record, name) for name in self.optional_fields})
        return data

    def uid(self, line: int, record: dict, content) -> str:
        if self.spec.uid_from == "line":
            return f"line-{line}"
        if self.spec.uid_from == "content":
            canonical = json.dumps(content, sort_keys=True, ensure_ascii=False).encode()
            return "sha256-" + hashlib.sha256(canonical).hexdigest()[:40]
        value = lookup(record, self.spec.uid_field)
        if value is MISSING or value is None or not str(value).strip():
            raise ImportRowError(
                line, f"missing uid field '{self.spec.uid_field}' (name the uid column with --uid FIELD, or pass --uid-from-line)"
            )
        uid = str(value).strip()
        if len(uid) > _UID_MAX:
            raise ImportRowError(line, f"uid is longer than {_UID_MAX} characters")
        return uid

    def tag(self, line: int, record: dict) -> str:
        if not self.spec.tag_field:
            return ""
        value = lookup(record, self.spec.tag_field)
        if value is MISSING:
            raise ImportRowError(line, f"missing tag field '{self.spec.tag_field}'")
        tag = "" if value is None else _as_filter_text(value)
        if len(tag) > _TAG_MAX:
            raise ImportRowError(line, f"tag '{tag[:20]}…' is longer than {_TAG_MAX} characters")
        return tag

    def metadata(self, line: int, record: dict) -> dict:
        meta = {}
        for path in self.spec.meta_fields:
            value = lookup(record, path)
            if value is MISSING:
                raise ImportRowError(line, f"missing field '{path}' (used by --meta)")
            meta[path] = value
        return meta


def image_fields(images: ImagePaths, line: int, data: dict) -> dict:
    """``data`` with its image fields read as sha256s (``tasks.data.images.ImagePaths``); a value naming
    no image of the task is the line's problem."""
    if not images.fields:
        return data
    try:
        return images.resolve(data)
    except ImageRefused as refused:
        raise ImportRowError(line, str(refused)) from None
