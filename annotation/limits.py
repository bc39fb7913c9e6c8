"""How much an annotator may submit: the per-minute submission rate and the task's daily example cap.

The rate (``settings.ANNOTATION_SUBMISSIONS_PER_MINUTE``) is counted in the Django cache before
the model is asked; the daily cap (the task's ``daily_example_cap``, a day in
``settings.TIME_ZONE``) is read from the author's ``AuthorDayTally`` of the day and enforced
while the example is stored, under the lock of that row. Both refuse with ``RateLimited`` (429).
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import AuthorDayTally
from dynabench import hotsql
from dynabench.errors import RateLimited
from dynabench.ratelimits import count_hit
from tasks.models import Task

_RATE_WINDOW_S = 60


def check_submission_rate(*, key: str) -> None:
    """Count one submission for ``key`` (``"user:<id>"``, ``"ip:<addr>"``) in this minute's window.

    The limit is ``settings.ANNOTATION_SUBMISSIONS_PER_MINUTE`` (0 turns it off), counted
    in the Django cache (Redis) with a fixed one-minute window (``dynabench.ratelimits``), so it
    holds across processes. Raises ``RateLimited`` (``rate_limited``, HTTP 429) past the limit.
    """
    limit = int(getattr(settings, "ANNOTATION_SUBMISSIONS_PER_MINUTE", 20))
    if limit <= 0:
        return
    count, wait = count_hit(f"annotation-submit:{key}", window_s=_RATE_WINDOW_S)
    if count > limit:
        raise RateLimited(
            Code.RATE_LIMITED,
            f"Too many submissions: at most {limit} a minute. Wait {wait} seconds, then submit again.",
        )


@dataclass(frozen=True)
class DailyAllowance:
    """How many examples ``user`` may still write for a task today (``cap`` None: no daily cap)."""

    cap: int | None
    written: int

    @property
    def remaining(self) -> int | None:
        return None if self.cap is None else max(0, self.cap - self.written)


def daily_allowance(*, user, task: Task) -> DailyAllowance:
    """Return the task's ``daily_example_cap`` and how many examples ``user`` wrote for it today.

    The day starts at midnight in ``settings.TIME_ZONE``; retracted examples count. One row
    read: the author's ``AuthorDayTally`` of the day, which ``annotation.saving._save_example`` keeps.
    """
    cap = task.config.get("daily_example_cap") or None
    if not cap:
        return DailyAllowance(cap=None, written=0)
    row = hotsql.fetch_one(hotsql.statement("annotation.written_today", _written_today_sql), [user.pk, task.pk, _today()])
    return DailyAllowance(cap=int(cap), written=row[0] if row else 0)


def _today():
    """Today's date in ``settings.TIME_ZONE``, as the database takes it for ``AuthorDayTally.day``."""
    return AuthorDayTally._meta.get_field("day").get_db_prep_value(timezone.localdate(), connection)


def _written_today_sql() -> str:
    """How many examples an author wrote for a task on a day (retracted ones included)."""
    t = AuthorDayTally
    return (
        f"SELECT {hotsql.column(t, 'written')} FROM {hotsql.table(t)} WHERE {hotsql.column(t, 'author')} = %s "
        f"AND {hotsql.column(t, 'task')} = %s AND {hotsql.column(t, 'day')} = %s"
    )


def _check_daily_cap(*, task: Task, written: int) -> DailyAllowance:
    """The allowance once this example (the ``written``-th of the author's day) is in; raise
    ``RateLimited`` (``daily_cap_reached``) when the ones before it used the cap up."""
    cap = task.config.get("daily_example_cap") or None
    if cap is None:
        return DailyAllowance(cap=None, written=0)
    before = written - 1
    if before >= cap:
        raise RateLimited(
            Code.DAILY_CAP_REACHED,
            f"You have written {before} examples for {task.name} today; the daily limit is {cap}. "
            f"Come back tomorrow (the count restarts at midnight {settings.TIME_ZONE}).",
        )
    return DailyAllowance(cap=int(cap), written=written)
