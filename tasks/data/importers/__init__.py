"""Import contexts and datasets from JSONL or CSV files: streamed, batched, all-or-nothing.

Both importers read the file one line at a time (memory stays flat in the file's size),
map each record onto the task's fields, check it, and insert in batches of
``BATCH_SIZE`` rows: inside one ``transaction.atomic()`` on PostgreSQL (or when the caller is in
a transaction already), and on SQLite in one transaction per batch, so its single write lock is
released between batches and a login or any page that writes keeps answering during a big
import (``Commits``; ``benchmarks/import_lock.py``). The first malformed record stops
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

Modules, one per concern; ``contexts`` and ``datasets`` are the two importers, each calling
the others step by step:

- ``files``: how a file is read (``FileSpec``, the streaming ``Reader``, ``parse_assignments``).
- ``mapping``: how a record becomes a row of the task (``RowMapper``, ``lookup``, image fields).
- ``errors``: what an import refuses (``ImportRowError``, ``ImportErrors``) and how refusals are kept.
- ``writing``: how rows are written in batches and taken back on failure (``Commits``, ``BatchWriter``).
- ``results``: what an import did (``ImportResult``) and when a file gave no rows.
- ``contexts``: ``import_contexts``; ``datasets``: ``import_dataset``.
"""
