"""How an import's rows are written: in batches of ``BATCH_SIZE`` (``BatchWriter``, which skips
rows stored with the same content and refuses a uid stored with other content or repeated in the
file), in one transaction or one per batch on SQLite, and taken back when the import fails
(``Commits``)."""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager, nullcontext

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Min

from tasks.data.importers.errors import ImportRowError, Problems
from tasks.data.importers.results import ImportResult

BATCH_SIZE = 1000


class Commits:
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


class BatchWriter:
    """Collect rows and insert them ``BATCH_SIZE`` at a time, skipping rows already stored
    with the same content and refusing a uid stored with different content or repeated in
    the file. Memory holds one batch. ``content_fields`` are compared to decide "same"."""

    def __init__(
        self, *, model, parent: dict, content_fields: tuple[str, ...], describe: str, repeats_ok: bool, result: ImportResult,
        problems: Problems | None = None, commits: Commits | None = None,
    ):
        self.commits = commits or Commits(batched=False)
        self.problems = problems or Problems(1)
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
        holds no write lock), then insert the rest in the batch's own transaction (``Commits.step``)."""
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
