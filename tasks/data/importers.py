"""Import contexts and datasets from JSONL or CSV files: streamed, batched, all-or-nothing.

Both importers read the file one line at a time (memory stays flat in the file's size),
map each record onto the task's fields, check it, and insert in batches of
``BATCH_SIZE`` rows: inside one ``transaction.atomic()`` on PostgreSQL (or when the caller is in
a transaction already), and on SQLite in one transaction per batch, so its single write lock is
released between batches and a login or any page that writes keeps answering during a big
import (``_Commits``; ``benchmarks/import_lock.py``). The first malformed record stops
the import with ``ImportRowError`` (``"line N: reason"``) and nothing of that file is kept: rolled
back in one transaction, or on SQLite deleted again (its batches' rows, and the round or dataset
the import created), so only an import in progress is ever seen half-done.
With ``max_errors=N`` (the console's uploads) the whole file is checked instead: the first
``N`` problems and the count of all of them come back as ``ImportErrors``, and still nothing
is kept. ``on_progress(bytes read, file size)`` is called as the file is read.

Mapping (``FileSpec.mapping``): ``{task field: file field}``. A task field not mapped reads
the file field of the same name. A file field is looked up as a key first (CSV columns
such as ``round.base``), then as a dotted path into nested JSON
(``prompt_data.prompt_sentence``, ``answers.0.text``).

Identity and idempotency: every row has a uid (``FileSpec.uid_field``, or the line number
with ``uid_from="line"``, or a hash of the mapped content with ``uid_from="content"``).
A uid already stored with the *same* content is skipped, so re-importing a file adds
nothing. A uid already stored with *different* content is an error (we refuse to
overwrite or silently keep stale data). A uid repeated within one file is an error,
except with ``uid_from="content"`` where repeats are identical by construction and skipped.
"""

from __future__ import annotations

import codecs
import csv
import gc
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Min
from django.utils.text import slugify
from tqdm import tqdm

from dynabench.errors import RuleError
from dynabench.jsonbounds import loads_bounded, refused_character
from tasks.data.images import ImagePaths, ImageRefused
from tasks.kinds import TargetError
from tasks.models import Context, Dataset, DatasetItem, Round, Task, default_label_visibility
from tasks.services import dataset_content_checksum, record_dataset_content

BATCH_SIZE = 1000
FORMATS = ("jsonl", "csv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}
_TAG_MAX = DatasetItem._meta.get_field("tag").max_length
_UID_MAX = DatasetItem._meta.get_field("uid").max_length

csv.field_size_limit(2**31 - 1)


class ImportErrorCode:
    FILE = "import_file_invalid"
    ROW = "import_row_invalid"
    OPTIONS = "import_options_invalid"


class ImportRowError(RuleError):
    """A record of the file is malformed; ``line`` is its 1-based line number in the file."""

    def __init__(self, line: int, reason: str):
        super().__init__(ImportErrorCode.ROW, f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class ImportErrors(RuleError):
    """Several records of the file are malformed (``max_errors`` > 1): ``errors`` holds the first
    of them (``ImportRowError``, in file order), ``total`` counts them all. Nothing was imported."""

    def __init__(self, errors: list[ImportRowError], total: int):
        rest = f" and {total - len(errors)} more" if total > len(errors) else ""
        super().__init__(
            ImportErrorCode.ROW,
            f"{total} line{'s' if total != 1 else ''} refused, nothing was imported: {errors[0].message}{rest}",
        )
        self.errors = errors
        self.total = total


class _Problems:
    """Where row problems go: raised at once (``limit`` 1, the default), or kept (the first
    ``limit``) and counted until the end of the file (``raise_any``)."""

    def __init__(self, limit: int):
        self.limit = max(1, int(limit))
        self.kept: list[ImportRowError] = []
        self.total = 0

    def add(self, error: ImportRowError) -> None:
        if self.limit == 1:
            raise error
        self.total += 1
        if len(self.kept) < self.limit:
            self.kept.append(error)

    def raise_any(self) -> None:
        if self.total:
            raise ImportErrors(sorted(self.kept, key=lambda e: e.line), self.total)


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


@dataclass
class ImportResult:
    """What an import did. ``added`` rows are new; ``unchanged`` were already stored with the
    same content; ``repeated`` were identical repeats within the file (``uid_from="content"``);
    ``filtered_out`` did not match the filters."""

    target: str
    added: int = 0
    unchanged: int = 0
    repeated: int = 0
    filtered_out: int = 0
    checksum: str = ""

    def summary(self) -> str:
        parts = [f"{self.added} added", f"{self.unchanged} already present"]
        if self.repeated:
            parts.append(f"{self.repeated} repeats skipped")
        if self.filtered_out:
            parts.append(f"{self.filtered_out} filtered out")
        return f"{self.target}: " + ", ".join(parts)


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


# --- reading -----------------------------------------------------------------------------


class _Reader:
    """Iterate ``(line number, record)`` over a JSONL or CSV file, one line at a time.

    Also feeds every byte read to a sha256 (``checksum``) and to the progress bar.
    """

    PROGRESS_EVERY = 500
    """Lines between two ``on_progress`` calls."""

    def __init__(self, spec: FileSpec, *, progress: bool | None, problems: _Problems | None = None, on_progress=None):
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
        self._problems = problems or _Problems(1)
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


_MISSING = object()
MISSING = _MISSING
"""What ``lookup`` returns for a path the record lacks."""


def lookup(record: dict, path: str):
    """Return ``record[path]``, else the value at dotted ``path``, else ``MISSING`` (the
    mapping rule of every import: a key first, then a path into nested JSON)."""
    return _lookup(record, path)


def _lookup(record: dict, path: str):
    """Return ``record[path]``, else the value at dotted ``path``, else ``_MISSING``."""
    if path in record:
        return record[path]
    value = record
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _as_filter_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# --- mapping records onto task fields ----------------------------------------------------


class _RowMapper:
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
            value = _lookup(record, path)
            if value is _MISSING:
                raise ImportRowError(line, f"missing field '{path}' (used by --filter)")
            if _as_filter_text(value) != wanted:
                return False
        return True

    def value(self, line: int, record: dict, name: str):
        value = _lookup(record, self.source(name))
        if value is _MISSING or value is None:
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
        value = _lookup(record, self.spec.uid_field)
        if value is _MISSING or value is None or not str(value).strip():
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
        value = _lookup(record, self.spec.tag_field)
        if value is _MISSING:
            raise ImportRowError(line, f"missing tag field '{self.spec.tag_field}'")
        tag = "" if value is None else _as_filter_text(value)
        if len(tag) > _TAG_MAX:
            raise ImportRowError(line, f"tag '{tag[:20]}…' is longer than {_TAG_MAX} characters")
        return tag

    def metadata(self, line: int, record: dict) -> dict:
        meta = {}
        for path in self.spec.meta_fields:
            value = _lookup(record, path)
            if value is _MISSING:
                raise ImportRowError(line, f"missing field '{path}' (used by --meta)")
            meta[path] = value
        return meta


def _target(task: Task, mapper: _RowMapper, line: int, record: dict, inputs: dict) -> dict:
    """Read the row's target with the task kind's rules (``task.spec.import_target``); raise ``ImportRowError``."""
    field = task.spec.target_field
    raw = mapper.value(line, record, field)
    try:
        return task.spec.import_target(task.config, raw, inputs, source=mapper.source(field))
    except TargetError as error:
        raise ImportRowError(line, str(error)) from None


# --- writing -----------------------------------------------------------------------------


class _Commits:
    """Where an import's writes go, and how a failed import takes them back.

    - One transaction for the whole import (PostgreSQL, whose row locks let other requests write
      meanwhile; or when the caller is already inside a transaction): a failure rolls it back.
    - On SQLite outside any transaction, one transaction per batch (``step``), so the database's
      single write lock is released between batches and other requests (a login, a page that
      writes its session) wait for one batch at most, not for the whole file. Other readers may
      see the rows of an import in progress. A failed import then **deletes what it wrote**
      (``undo``): the rows of each batch (by the pk range SQLite gave the batch: it serialises
      writers, so the range holds this batch's rows only) and the round or dataset it created,
      so the all-or-nothing outcome holds once the import has ended.
    """

    def __init__(self, *, batched: bool | None = None):
        self.batched = (connection.vendor == "sqlite" and not connection.in_atomic_block) if batched is None else batched
        self.written: list[tuple[type, dict, int, int]] = []
        self.created: list = []
        self._outer = None

    def __enter__(self):
        if not self.batched:
            self._outer = transaction.atomic()
            self._outer.__enter__()
        return self

    def __exit__(self, kind, error, trace):
        if not self.batched:
            return self._outer.__exit__(kind, error, trace)
        if kind is not None:
            self.undo()
        return False

    def step(self):
        """The transaction of one batch (batched), or nothing more than the import's own."""
        return self._batch_transaction() if self.batched else nullcontext()

    @contextmanager
    def _batch_transaction(self):
        """One batch's transaction; after it commits, the write lock is left free for
        ``settings.SQLITE_IMPORT_PAUSE_RATIO`` (default 1.0) times as long as the batch held it. On
        a busy machine the batches' inserts took 60 % of an import's time, and a login polling
        for the lock (SQLite's busy handler retries every 100 ms) kept missing the short gaps
        between them; with the pause another writer's next try finds the lock free.

        Python's cyclic garbage collector is held off while the transaction is open (and runs, if
        due, after it commits): the import allocates a model object per row, and a full collection
        falling inside a batch held the write lock for 0.3-0.5 s every few batches instead of tens
        of milliseconds, which was the longest wait a login met (``benchmarks/import_lock.py``)."""
        started = time.perf_counter()
        collecting = gc.isenabled()
        gc.disable()
        try:
            with transaction.atomic():
                yield
        finally:
            if collecting:
                gc.enable()
        ratio = float(getattr(settings, "SQLITE_IMPORT_PAUSE_RATIO", 1.0))
        if ratio > 0:
            time.sleep(min((time.perf_counter() - started) * ratio, 1.0))

    def wrote(self, model, parent: dict, rows: list) -> None:
        """Remember the rows one batch inserted (called inside that batch's ``step``): their pk range,
        from the pks SQLite returns to ``bulk_create`` (else looked up by their uids)."""
        if not self.batched or not rows:
            return
        pks = [row.pk for row in rows]
        if None in pks:
            span = model.objects.filter(**parent, uid__in=[row.uid for row in rows]).aggregate(low=Min("pk"), high=Max("pk"))
            low, high = span["low"], span["high"]
        else:
            low, high = min(pks), max(pks)
        self.written.append((model, parent, low, high))

    def made(self, obj) -> None:
        """Remember an object (a round, a dataset) the import created, deleted if it fails."""
        if self.batched:
            self.created.append(obj)

    def undo(self) -> None:
        with transaction.atomic():
            for model, parent, low, high in reversed(self.written):
                model.objects.filter(**parent, pk__gte=low, pk__lte=high).delete()
            for obj in reversed(self.created):
                type(obj).objects.filter(pk=obj.pk).delete()


class _BatchWriter:
    """Collect rows and insert them ``BATCH_SIZE`` at a time, skipping rows already stored
    with the same content and refusing a uid stored with different content or repeated in
    the file. Memory holds one batch. ``content_fields`` are compared to decide "same"."""

    def __init__(
        self, *, model, parent: dict, content_fields: tuple[str, ...], describe: str, repeats_ok: bool, result: ImportResult,
        problems: _Problems | None = None, commits: _Commits | None = None,
    ):
        self.commits = commits or _Commits(batched=False)
        self.problems = problems or _Problems(1)
        self.model = model
        self.parent = parent
        self.content_fields = content_fields
        self.describe = describe
        self.repeats_ok = repeats_ok
        self.result = result
        self.parent_ids = {model._meta.get_field(name).attname: getattr(value, "pk", value) for name, value in parent.items()}
        # Rows with a larger pk were written by this import: a uid found there repeats within the file.
        self.first_new_pk = (model.objects.aggregate(m=Max("pk"))["m"] or 0) + 1
        self.batch: dict[str, tuple[int, dict]] = {}

    def add(self, line: int, uid: str, values: dict) -> None:
        if uid in self.batch:
            if self.repeats_ok:
                self.result.repeated += 1
                return
            self.problems.add(ImportRowError(line, f"uid '{uid}' repeats line {self.batch[uid][0]} of this file"))
            return
        self.batch[uid] = (line, values)
        if len(self.batch) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        """Sort the batch's rows already stored out (a read: on SQLite outside any transaction, so it
        holds no write lock), then insert the rest in the batch's own transaction (``_Commits.step``)."""
        if not self.batch:
            return
        self._sort_out_stored()
        # The rows are built before the write lock is taken (by foreign-key id: assigning the parent
        # object itself costs a descriptor's checks per row).
        rows = [self.model(**self.parent_ids, uid=uid, **values) for uid, (_, values) in self.batch.items()]
        with self.commits.step():
            created = self.model.objects.bulk_create(rows, batch_size=BATCH_SIZE)
            self.commits.wrote(self.model, self.parent, created)
        self.result.added += len(self.batch)
        self.batch = {}

    def _sort_out_stored(self) -> None:
        stored = self.model.objects.filter(**self.parent, uid__in=list(self.batch)).values("pk", "uid", *self.content_fields)
        for row in stored:
            line, values = self.batch.pop(row["uid"])
            if row["pk"] >= self.first_new_pk:
                if self.repeats_ok:
                    self.result.repeated += 1
                    continue
                self.problems.add(ImportRowError(line, f"uid '{row['uid']}' appears earlier in this file"))
                continue
            changed = [f for f in self.content_fields if row[f] != values[f]]
            if changed:
                self.problems.add(ImportRowError(
                    line,
                    f"uid '{row['uid']}' is already in {self.describe} with a different {' and '.join(changed)}; "
                    "nothing was imported (give the row a new uid, or delete the stored one first)",
                ))
                continue
            self.result.unchanged += 1


def _no_rows_error(spec: FileSpec, result: ImportResult) -> None:
    if result.added + result.unchanged + result.repeated == 0:
        why = f" matched --filter {spec.filters}" if spec.filters else ""
        raise RuleError(ImportErrorCode.FILE, f"{Path(spec.path).name}: no rows{why}; nothing was imported")


# --- the two importers -------------------------------------------------------------------


def _image_fields(images: ImagePaths, line: int, data: dict) -> dict:
    """``data`` with its image fields read as sha256s (``tasks.data.images.ImagePaths``); a value naming
    no image of the task is the line's problem."""
    if not images.fields:
        return data
    try:
        return images.resolve(data)
    except ImageRefused as refused:
        raise ImportRowError(line, str(refused)) from None


def import_contexts(
    *, task: Task, round_number: int, spec: FileSpec, create_round: bool = False, progress: bool | None = None,
    max_errors: int = 1, on_progress=None,
) -> ImportResult:
    """Import contexts for ``task``'s round ``round_number`` from ``spec.path``.

    Each record gives the task's context fields (``task.config["context_fields"]``, e.g.
    ``premise`` for NLI, ``passage`` for QA, ``prompt`` for sentiment), read through
    ``spec.mapping``. With ``create_round`` a missing round is created *closed* (an owner
    opens it from the admin). All-or-nothing; raises ``ImportRowError`` (``"line N: ..."``)
    or ``RuleError`` and then stores nothing. ``max_errors`` > 1 checks the whole file and
    raises ``ImportErrors`` (the first ``max_errors`` problems and their total) instead;
    ``on_progress(bytes read, file size)`` reports reading. Returns the ``ImportResult``.
    """
    names = [f["name"] for f in task.config.get("context_fields", [])]
    if not names:
        raise RuleError(ImportErrorCode.OPTIONS, f"task {task.code} has no context fields to import")
    mapper = _RowMapper(spec, text_fields=names, optional_fields=[], extra_fields=[])
    problems = _Problems(max_errors)
    reader = _Reader(spec, progress=progress, problems=problems, on_progress=on_progress)
    images = ImagePaths(task)
    with _Commits() as commits:
        with commits.step():
            round_ = Round.objects.select_for_update().filter(task=task, number=round_number).order_by().first()
            if round_ is None:
                if not create_round:
                    raise RuleError(
                        ImportErrorCode.OPTIONS,
                        f"task {task.code} has no round {round_number}; create it in the admin or pass --create-round",
                    )
                round_ = Round.objects.create(task=task, number=round_number, status=Round.Status.CLOSED)
                commits.made(round_)
        result = ImportResult(target=f"{task.code} round {round_number} contexts")
        writer = _BatchWriter(
            model=Context, parent={"round": round_}, content_fields=("data", "tag"),
            describe=f"{task.code} round {round_number}", repeats_ok=spec.uid_from == "content", result=result,
            problems=problems, commits=commits,
        )
        for line, record in reader:
            try:
                if not mapper.matches(line, record):
                    result.filtered_out += 1
                    continue
                data = _image_fields(images, line, mapper.fields(line, record))
                writer.add(line, mapper.uid(line, record, data), {"data": data, "tag": mapper.tag(line, record)})
            except ImportRowError as error:
                problems.add(error)
        writer.flush()
        problems.raise_any()
        _no_rows_error(spec, result)
    result.checksum = reader.checksum
    return result


def import_dataset(
    *,
    task: Task,
    name: str,
    spec: FileSpec,
    round_number: int | None = None,
    access: str | None = None,
    split: str | None = None,
    weight: float | None = None,
    progress: bool | None = None,
    label_visibility: str | None = None,
    max_errors: int = 1,
    on_progress=None,
) -> ImportResult:
    """Import dataset ``name`` of ``task`` from ``spec.path``; create the dataset if it is new.

    Items: ``input`` = ``{field: text}`` for each of ``task.config["model_inputs"]`` (plus any
    other context/input field named in ``spec.mapping``); ``target`` = ``{"label": ...}``
    (classification; labels normalised with ``tasks.kinds.normalise_label``, so ANLI's
    ``e/n/c`` load as ``entailment/neutral/contradiction``) or ``{"answers": [{"text",
    "answer_start"}]}`` (extractive QA, each answer checked against the passage).

    ``round_number``, ``access`` (scoring|standard), ``split``, ``weight`` and
    ``label_visibility`` (public|hidden; default ``models.default_label_visibility``: hidden for
    a test split or a scoring dataset) are set when the dataset is created; for an existing
    dataset any given value must equal the stored one. A round that does not exist yet is
    created closed (data imported for a past round, e.g. ANLI R1/R2/R3 into rounds 1/2/3).
    ``Dataset.source`` and ``source_checksum`` (sha256 of the file) record the last file imported
    into it; its item count, canonical checksum and version are recomputed
    (``tasks.services.record_dataset_content``), and when the content changed every model is
    scheduled on it once the import commits (``leaderboard_inputs_changed``).
    All-or-nothing; raises ``ImportRowError``/``RuleError`` (``ImportErrors`` with ``max_errors``
    > 1; ``on_progress`` as for ``import_contexts``).
    """
    if slugify(name) != name:
        raise RuleError(ImportErrorCode.OPTIONS, f"dataset name '{name}' must be a slug (lower-case letters, digits, hyphens), e.g. '{slugify(name)}'")
    if access is not None and access not in Dataset.Access.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"access must be one of {', '.join(Dataset.Access.values)}")
    if label_visibility is not None and label_visibility not in Dataset.LabelVisibility.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"label_visibility must be one of {', '.join(Dataset.LabelVisibility.values)}")
    if round_number is not None and (not isinstance(round_number, int) or round_number < 1):
        raise RuleError(ImportErrorCode.OPTIONS, "round must be a positive integer")
    if split is not None and split not in Dataset.Split.values:
        raise RuleError(ImportErrorCode.OPTIONS, f"split must be one of {', '.join(v for v in Dataset.Split.values if v)}")
    if weight is not None and weight < 0:
        raise RuleError(ImportErrorCode.OPTIONS, "weight must be ≥ 0")

    config = task.config
    model_inputs = list(config["model_inputs"])
    all_fields = [f["name"] for f in config.get("context_fields", [])] + [f["name"] for f in config.get("input_fields", [])]
    mapper = _RowMapper(
        spec, text_fields=model_inputs, optional_fields=[f for f in all_fields if f not in model_inputs],
        extra_fields=[task.spec.target_field],
    )
    problems = _Problems(max_errors)
    reader = _Reader(spec, progress=progress, problems=problems, on_progress=on_progress)
    images = ImagePaths(task)

    with _Commits() as commits:
        with commits.step():
            round_ = None
            if round_number is not None:
                round_, made = Round.objects.get_or_create(task=task, number=round_number, defaults={"status": Round.Status.CLOSED})
                if made:
                    commits.made(round_)
            dataset = Dataset.objects.select_for_update().filter(task=task, name=name).order_by().first()
            wanted = {"round": round_, "access": access, "split": split, "weight": weight, "label_visibility": label_visibility}
            if dataset is None:
                access = access or Dataset.Access.SCORING
                dataset = Dataset.objects.create(
                    task=task, name=name, round=round_, access=access,
                    split=split or "", weight=1.0 if weight is None else weight,
                    label_visibility=label_visibility or default_label_visibility(split=split or "", access=access),
                )
                commits.made(dataset)
            else:
                for attr, value in wanted.items():
                    if value is not None and getattr(dataset, attr) != value:
                        raise RuleError(
                            ImportErrorCode.OPTIONS,
                            f"dataset {dataset} exists with {attr}={getattr(dataset, attr)}, not {value}; "
                            "change it in the admin or choose another name",
                        )
        result = ImportResult(target=f"dataset {dataset}")
        writer = _BatchWriter(
            model=DatasetItem, parent={"dataset": dataset}, content_fields=("input", "target", "tag"),
            describe=f"dataset {dataset}", repeats_ok=spec.uid_from == "content", result=result,
            problems=problems, commits=commits,
        )
        for line, record in reader:
            try:
                if not mapper.matches(line, record):
                    result.filtered_out += 1
                    continue
                inputs = _image_fields(images, line, mapper.fields(line, record))
                target = _target(task, mapper, line, record, inputs)
                values = {"input": inputs, "target": target, "tag": mapper.tag(line, record), "metadata": mapper.metadata(line, record)}
                writer.add(line, mapper.uid(line, record, {"input": inputs, "target": target}), values)
            except ImportRowError as error:
                problems.add(error)
        writer.flush()
        problems.raise_any()
        _no_rows_error(spec, result)
        # Batched (SQLite): every item is read for the checksum before the short transaction that records it.
        content = dataset_content_checksum(dataset) if commits.batched else None
        with commits.step():
            if result.added:
                record_dataset_content(dataset, source=str(Path(spec.path).resolve()), source_checksum=reader.checksum, content=content)
            else:
                record_dataset_content(dataset, content=content)
    result.checksum = reader.checksum
    return result
