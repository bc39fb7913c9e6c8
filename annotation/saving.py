"""Storing a checked example with the model's answer, and its tallies, in one short transaction.

The model has answered already, so no lock is held across its forward. One statement counts
the example in the author's ``AuthorDayTally`` of the day (locking that row, so the daily cap
of ``annotation/limits.py`` holds under concurrent submissions); one bumps the context's
``times_used`` only while its round is open; the insert counts it in the round's tallies
(``annotation/counters.py``) and a crowd worker's study progress. A submission key already
used by the author finds the example it made (``_replayed``), so a repeat stores nothing.
"""

from django.db import transaction

from annotation import crowd, limits
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import AuthorDayTally, CrowdStudy, CrowdWorker, Example
from dynabench import hotsql
from dynabench.errors import RuleError
from tasks.models import Context, Round

def _count_written_sql() -> str:
    """Add one example to an author's tally of the day for a task (creating the row), and return
    the new count and whether the author is a crowd worker. The upsert locks the row until the
    transaction ends, so one author's concurrent submissions to a task are counted one at a time."""
    t, worker = AuthorDayTally, CrowdWorker
    keys = ", ".join(hotsql.column(t, name) for name in ("author", "task", "day"))
    written = hotsql.column(t, "written")
    return (
        f"INSERT INTO {hotsql.table(t)} ({keys}, {written}) VALUES (%s, %s, %s, 1) "
        f"ON CONFLICT ({keys}) DO UPDATE SET {written} = {hotsql.qualified(t, 'written')} + 1 "
        f"RETURNING {written}, EXISTS(SELECT 1 FROM {hotsql.table(worker)} "
        f"WHERE {hotsql.qualified(worker, 'user')} = {hotsql.qualified(t, 'author')})"
    )


def _replayed_sql() -> str:
    return hotsql.keyed_id_sql(Example, "author")


def _replayed(*, user, submission_key: str) -> Example | None:
    """The example ``user`` already wrote with ``submission_key``, marked as a repeat (or None).

    Every submission from the page carries a key, and almost none is a repeat: the look-up is
    one fixed statement that can use the key's index (``hotsql.keyed_id_sql``); only a repeat
    loads the example through the ORM."""
    if not submission_key:
        return None
    row = hotsql.fetch_one(hotsql.statement("annotation.replayed", _replayed_sql), [user.pk, submission_key])
    if row is None:
        return None
    example = Example.objects.select_related("round__task", "context", "model").filter(pk=row[0]).first()
    if example is not None:
        example.replayed, example.inference_s = True, 0.0
    return example


def _use_context_sql() -> str:
    """Count one more use of a context, only while its round has the given status (open)."""
    c, r = Context, Round
    return (
        f"UPDATE {hotsql.table(c)} SET {hotsql.column(c, 'times_used')} = {hotsql.column(c, 'times_used')} + 1 "
        f"WHERE {hotsql.column(c, 'id')} = %s AND EXISTS(SELECT 1 FROM {hotsql.table(r)} WHERE {hotsql.qualified(r, 'id')} = "
        f"{hotsql.qualified(c, 'round')} AND {hotsql.qualified(r, 'status')} = %s)"
    )


def _save_example(*, user, context: Context, submission_key: str = "", **fields) -> Example:
    """Store the example in one short transaction (the model has answered already: no lock is
    held across its forward).

    The first statement adds the example to the author's ``AuthorDayTally`` of the day: the
    upsert locks that row, so one annotator's concurrent submissions are counted one at a time
    against the daily cap. It also says whether the author is a crowd worker, so most authors
    skip ``crowd.note_progress``. The context's ``times_used`` is bumped only while its round is
    open (one statement checks and counts); the example is inserted, which counts it in the
    round's tallies (``annotation.counters``). Of two requests with one submission key, the
    second waits for the first's day row, then its insert breaks the key's unique constraint:
    ``IntegrityError``, and everything it did is rolled back (``create_example``,
    ``annotation/services.py``, answers with the first one's example)."""
    task = context.round.task
    with transaction.atomic():
        written, crowd_worker = hotsql.fetch_one(
            hotsql.statement("annotation.count_written", _count_written_sql), [user.pk, task.pk, limits._today()]
        )
        allowance = limits._check_daily_cap(task=task, written=written)
        if not hotsql.execute(hotsql.statement("annotation.use_context", _use_context_sql), [context.pk, Round.Status.OPEN]):
            raise RuleError(Code.ROUND_CLOSED, "The round of this context was closed while you wrote; take a new context.")
        example = Example(round=context.round, context=context, author=user, submission_key=submission_key, **fields)
        hotsql.insert(example)  # as example.save(): signals (the round's tallies) included
        if crowd_worker:
            crowd.note_progress(user=user, round=context.round, activity=CrowdStudy.Activity.WRITE)
    example.replayed = False
    # Counted under the day's lock, this example included: the page shows it without counting again.
    example.daily_allowance = allowance
    example.by_crowd_worker = bool(crowd_worker)  # the create page then sends the study banner again
    return example
