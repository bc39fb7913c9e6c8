"""How a file is read: its format, encoding, mapping and uid options (``FileSpec``), and the
``Reader`` that streams ``(line number, record)`` from JSONL or CSV one line at a time, refusing
malformed lines, while it hashes the bytes and reports progress."""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from dynabench.errors import RuleError
from dynabench.jsonbounds import loads_bounded, refused_character
from tasks.data.importers.errors import ImportErrorCode, ImportRowError, Problems

FORMATS = ("jsonl", "csv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}

csv.field_size_limit(2**31 - 1)


@dataclass(frozen=True)
class FileSpec:
    """How to read one file.

    - ``format``: ``"jsonl"`` or ``"csv"``; ``None`` picks it from the extension.
    - ``mapping``: ``{task field: file field or dotted path}``.
    - ``uid_field``: the file field holding each row's uid; ``uid_from``: ``"field"``
      (default), ``"line"`` (``line-<N>``) or ``"content"`` (a sha256 of the mapped fields).
    - ``tag_field``: the file field copied to the row's ``tag`` (at most 64 characters).
    - ``filters``: ``{file field: value}``; only rows whose fields all equal the values (as
      text; JSON ``true``/``false``/``null`` read as ``true``/``false``/``null``) are imported.
    - ``meta_fields``: file fields copied into ``DatasetItem.metadata`` (datasets only).
    - ``encoding``: the file's text encoding (default UTF-8; a UTF-8 BOM is ignored).
    """

    path: Path
    format: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    uid_field: str = "uid"
    uid_from: str = "field"
    tag_field: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    meta_fields: tuple[str, ...] = ()
    encoding: str = "utf-8"

    def resolved_format(self) -> str:
        if self.format:
            if self.format not in FORMATS:
                raise RuleError(ImportErrorCode.OPTIONS, f"unknown format '{self.format}' (use jsonl or csv)")
            return self.format
        fmt = _EXTENSIONS.get(Path(self.path).suffix.lower())
        if fmt is None:
            raise RuleError(
                ImportErrorCode.OPTIONS,
                f"cannot tell the format of '{Path(self.path).name}' from its extension; pass --format jsonl or --format csv",
            )
        return fmt


def parse_assignments(values, *, option: str) -> dict[str, str]:
    """Parse ``["a=b", ...]`` (from ``--map`` or ``--filter``) into ``{"a": "b"}``.

    Raises ``RuleError`` naming the option for a value without ``=`` or with an empty side.
    """
    parsed = {}
    for value in values or []:
        key, sep, val = value.partition("=")
        if not sep or not key.strip() or (option == "--map" and not val.strip()):
            raise RuleError(ImportErrorCode.OPTIONS, f"{option} '{value}': expected NAME=VALUE")
        parsed[key.strip()] = val.strip()
    return parsed


class Reader:
    """Iterate ``(line number, record)`` over a JSONL or CSV file, one line at a time.

    Also feeds every byte read to a sha256 (``checksum``) and to the progress bar.
    """

    PROGRESS_EVERY = 500
    """Lines between two ``on_progress`` calls."""

    def __init__(self, spec: FileSpec, *, progress: bool | None, problems: Problems | None = None, on_progress=None):
        self.spec = spec
        self.path = Path(spec.path)
        self.format = spec.resolved_format()
        try:
            codecs.lookup(spec.encoding)
        except LookupError:
            raise RuleError(ImportErrorCode.OPTIONS, f"unknown encoding '{spec.encoding}'") from None
        if not self.path.is_file():
            raise RuleError(ImportErrorCode.FILE, f"no such file: {self.path}")
        self._sha = hashlib.sha256()
        self._progress = progress
        self._problems = problems or Problems(1)
        self._on_progress = on_progress

    @property
    def checksum(self) -> str:
        return self._sha.hexdigest()

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        with open(self.path, "rb") as fh, tqdm(
            total=self.path.stat().st_size, unit="B", unit_scale=True, desc=self.path.name,
            file=sys.stderr, disable=None if self._progress is None else not self._progress, leave=False,
        ) as bar:
            lines = self._decoded_lines(fh, bar)
            yield from (self._jsonl(lines) if self.format == "jsonl" else self._csv(lines))

    def _decoded_lines(self, fh, bar) -> Iterator[str]:
        encoding = self.spec.encoding
        bom_encoding = "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding
        size, done = self.path.stat().st_size, 0
        for number, raw in enumerate(fh, start=1):
            self._sha.update(raw)
            bar.update(len(raw))
            done += len(raw)
            if self._on_progress is not None and (number % self.PROGRESS_EVERY == 0 or done == size):
                self._on_progress(done, size)
            try:
                yield raw.decode(bom_encoding if number == 1 else encoding)
            except UnicodeDecodeError as exc:
                self._problems.add(ImportRowError(
                    number,
                    f"not valid {encoding} text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "save the file as UTF-8 or pass --encoding",
                ))
                yield "\n"  # counted as a line, then skipped as blank

    def _jsonl(self, lines) -> Iterator[tuple[int, dict]]:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = loads_bounded(line)
            except json.JSONDecodeError as exc:
                self._problems.add(ImportRowError(number, f"bad JSON: {exc.msg} (column {exc.colno})"))
                continue
            except ValueError as exc:  # dynabench.jsonbounds.JSONRefused: too deep, a huge number, NUL
                self._problems.add(ImportRowError(number, f"refused JSON: {exc}"))
                continue
            if not isinstance(record, dict):
                self._problems.add(ImportRowError(number, f"expected a JSON object, found {type(record).__name__}"))
                continue
            yield number, record

    def _csv(self, lines) -> Iterator[tuple[int, dict]]:
        reader = csv.reader(lines)
        try:
            header = next(reader)
        except StopIteration:
            raise ImportRowError(1, "the file is empty: a CSV file needs a header row") from None
        except csv.Error as exc:
            raise ImportRowError(1, f"bad CSV header: {exc}") from None
        seen = set()
        for name in header:
            if problem := refused_character(name):
                raise ImportRowError(1, f"a column name holds {problem}; remove it")
            if name in seen:
                raise ImportRowError(1, f"column '{name}' appears twice in the header")
            seen.add(name)
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                self._problems.add(ImportRowError(start, f"bad CSV: {exc}"))
                continue
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                self._problems.add(ImportRowError(start, f"expected {len(header)} fields as in the header, found {len(row)}"))
                continue
            bad = next(((name, problem) for name, cell in zip(header, row) if (problem := refused_character(cell))), None)
            if bad:
                self._problems.add(ImportRowError(start, f"column '{bad[0]}' holds {bad[1]}; remove it"))
                continue
            yield start, dict(zip(header, row))
