"""The review queue: which example a validator is handed next, and the lease that holds it.

``next_example_for`` leases the next pending example for ``LEASE_DURATION`` (or serves a gold
item instead: ``validation.gold.serve``); ``current_example_for`` hands back what a validator
already holds; ``release_lease`` gives it back; ``note_skip`` counts the skips a day allows.
``validation.services.record_validation`` takes a user-mode verdict only on an example leased here.
"""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Example, ValidationState
from dynabench.errors import RuleError
from dynabench.ratelimits import count_hit
from tasks.models import TaskBan
from validation import gold
from validation.calculations import ConsensusPolicy
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation

LEASE_DURATION = timedelta(minutes=10)


def review_queue(*, validator, round, model_wrong: bool, now=None, exclude_ids=()):
    """Return the queryset of examples ``validator`` may be handed in ``round``, queue order.

    Pending, not retracted, not their own, not already judged by them, not leased to
    someone else, not written by someone banned from the task (``tasks.models.TaskBan``),
    below the task's vote budget (``ConsensusPolicy.max_votes``: an example that used it up
    unsettled waits for an owner); ``model_wrong`` selects fooling or non-fooling examples;
    fewest validations first, then oldest. Fits the index ``example_review_queue``.
    """
    now = now or timezone.now()
    max_votes = ConsensusPolicy.from_config(round.task.config).max_votes
    judged = Validation.objects.filter(example=OuterRef("pk"), validator=validator)
    queue = (
        Example.objects.filter(
            round=round, validation_state=ValidationState.PENDING, model_wrong=model_wrong, retracted=False,
            validation_count__lt=max_votes,
        )
        .exclude(author=validator)
        .exclude(Exists(TaskBan.objects.filter(task_id=round.task_id, user_id=OuterRef("author_id"))))
        .filter(Q(leased_until__isnull=True) | Q(leased_until__lte=now) | Q(leased_to=validator))
        .filter(~Exists(judged))
        .order_by("validation_count", "created_at")
    )
    if exclude_ids:
        queue = queue.exclude(pk__in=list(exclude_ids))
    return queue


def current_example_for(*, validator, round, exclude_ids=()) -> Example | None:
    """Return the example ``validator`` holds a live lease on in ``round`` (pending, not
    retracted, not judged by them, not in ``exclude_ids``), else ``next_example_for``.
    The review page calls this on load, so reloading shows the same example (or the same
    gold item: ``gold.open_gold_for``)."""
    served = gold.open_gold_for(validator=validator, round=round, lease=LEASE_DURATION, exclude_ids=exclude_ids)
    if served is not None:
        return served
    mine = (
        Example.objects.filter(
            round=round, leased_to=validator, leased_until__gt=timezone.now(),
            validation_state=ValidationState.PENDING, retracted=False,
        )
        .exclude(pk__in=list(exclude_ids))
        .filter(~Exists(Validation.objects.filter(example=OuterRef("pk"), validator=validator)))
        .select_related("context", "round__task")
        .first()
    )
    return mine or next_example_for(validator=validator, round=round, exclude_ids=exclude_ids)


def next_example_for(*, validator, round, exclude_ids=()) -> Example | None:
    """Give back whatever ``validator`` holds in ``round`` and lease them the next example; or None.

    Order: fooling examples first (non-fooling too when the task's ``validate_non_fooling``
    is set), fewest validations, oldest; never their own, never one they judged, never a
    retracted or settled one; ``exclude_ids`` (examples they skipped) left out.

    Claiming, one implementation for both databases: the same ``review_queue`` query; on
    PostgreSQL its first row is locked with ``SELECT … FOR UPDATE SKIP LOCKED`` and leased
    in the same ``UPDATE … RETURNING`` statement (two validators never wait on or take the
    same row); elsewhere (SQLite) a few candidates are read and each is leased with a
    conditional UPDATE that succeeds only while the lease is free (``== 1`` row). The lease
    lasts ``LEASE_DURATION`` (10 minutes); an abandoned example comes back after that.

    Gold items are mixed in first: with probability ``gold_rate`` the validator gets a gold
    item instead (``gold.serve``, presented as a pending example; their leases in the round
    are given back the same way).
    """
    if not round.task.collecting:
        return None
    served = gold.serve(validator=validator, round=round, lease=LEASE_DURATION, exclude_ids=exclude_ids)
    if served is not None:
        Example.objects.filter(round=round, leased_to=validator).update(leased_to=None, leased_until=None)
        served.round = round
        return served
    now = timezone.now()
    kinds = [True, False] if round.task.config.get("validate_non_fooling") else [True]
    if connection.features.has_select_for_update_skip_locked:
        for n, model_wrong in enumerate(kinds):
            queue = review_queue(validator=validator, round=round, model_wrong=model_wrong, now=now, exclude_ids=exclude_ids)
            example = _claim_first_skip_locked(queue, validator=validator, now=now, release_in=round if n == 0 else None)
            if example is not None:
                example.round = round
                return example
        return None
    Example.objects.filter(round=round, leased_to=validator).update(leased_to=None, leased_until=None)
    while True:
        found_any = False
        with transaction.atomic():
            for model_wrong in kinds:
                queue = review_queue(validator=validator, round=round, model_wrong=model_wrong, now=now, exclude_ids=exclude_ids)
                candidates = list(queue.only("pk")[:4])
                found_any = found_any or bool(candidates)
                for candidate in candidates:
                    if _claim(candidate.pk, validator=validator, now=now):
                        return Example.objects.select_related("context", "round__task").get(pk=candidate.pk)
                if candidates:
                    break  # all taken meanwhile: look again from the top
        if not found_any:
            return None
        now = timezone.now()


def _claim_first_skip_locked(queue, *, validator, now, release_in):
    """PostgreSQL: lock the first free example of ``queue`` (``FOR UPDATE SKIP LOCKED``) and
    lease it in one ``UPDATE … RETURNING`` statement; return it, or None. With
    ``release_in`` (a round) the validator's leases in that round are given back first, in
    the same transaction.

    Rows another claim holds are skipped; a row whose lease was taken meanwhile fails
    PostgreSQL's re-check under the lock and the scan moves on. When the claim is its own
    transaction it is sent as one round trip together with ``SET LOCAL synchronous_commit
    = off``: only a lease is written, and a lease lost in a server crash just returns the
    example to the queue (validations keep synchronous commit).
    """
    table = connection.ops.quote_name(Example._meta.db_table)
    plain, params = queue.values("pk")[:1].query.sql_with_params()
    locked = f"{plain} {connection.ops.for_update_sql(skip_locked=True, of=(table,))}"
    fields = Example._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    claim = f"UPDATE {table} SET leased_to_id = %s, leased_until = %s WHERE id = ({locked}) RETURNING {columns}"
    release = f"UPDATE {table} SET leased_to_id = NULL, leased_until = NULL WHERE round_id = %s AND leased_to_id = %s"
    one_string = not connection.in_atomic_block and not connection.settings_dict["OPTIONS"].get("server_side_binding")
    claim_params = [validator.pk, now + LEASE_DURATION, *params]
    release_first = release_in is not None
    release_params = [release_in.pk, validator.pk] if release_first else []
    with connection.cursor() as cursor:
        if one_string:
            # One simple-protocol query string runs as one implicit transaction: one round trip.
            statements = ["SET LOCAL synchronous_commit = off"] + ([release] if release_first else []) + [claim]
            cursor.execute("; ".join(statements), release_params + claim_params)
            for _ in range(len(statements) - 1):
                cursor.nextset()
        else:
            if release_first:
                cursor.execute(release, release_params)
            cursor.execute(claim, claim_params)
        row = cursor.fetchone()
    if row is None:
        return None
    values = [f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v for f, v in zip(fields, row)]
    return Example.from_db(connection.alias, [f.attname for f in fields], values)


def _claim(pk, *, validator, now) -> bool:
    free = Q(leased_until__isnull=True) | Q(leased_until__lte=now) | Q(leased_to=validator)
    return (
        Example.objects.filter(free, pk=pk, validation_state=ValidationState.PENDING)
        .update(leased_to=validator, leased_until=now + LEASE_DURATION)
        == 1
    )


def note_skip(*, validator, round) -> int:
    """Count one skip by ``validator`` in ``round``; return how many they have left today.

    At most ``settings.VALIDATION_SKIPS_PER_DAY`` (0: no limit) a day (fixed 24 h window, kept in
    the cache so it survives a new session): otherwise skipping until the queue hands out a
    chosen example would undo the lease rule (``record_validation`` takes only leased examples).
    Raises ``RuleError`` (429, ``too_many_skips``) past the limit; nothing is skipped then.
    """
    limit = settings.VALIDATION_SKIPS_PER_DAY
    if limit <= 0:
        return -1
    count, resets_in = count_hit(f"validation-skip:{validator.pk}:{round.pk}", window_s=86400)
    if count > limit:
        hours = max(1, -(-resets_in // 3600))
        raise RuleError(
            Code.TOO_MANY_SKIPS,
            f"You skipped {limit} examples in this round today, the most allowed. Validate this one (flag it if it "
            f"cannot be judged), or come back in {hours} hour{'s' if hours != 1 else ''}.",
            status_code=429,
        )
    return limit - count


def release_lease(*, example, validator) -> bool:
    """Give ``example`` back to the queue if ``validator`` holds its lease (or forget the gold
    item it was served as); True if released."""
    released = Example.objects.filter(pk=example.pk, leased_to=validator).update(leased_to=None, leased_until=None) == 1
    return gold.give_back(example=example, validator=validator) or released
