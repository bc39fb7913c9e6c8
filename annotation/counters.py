"""Running counts of each round's examples (``RoundTally``, ``AuthorTally``,
``RoundHourTally`` per UTC hour and model, ``RoundVoteTally`` per settled-or-not and number of
votes), changed in the same transaction as the example or
validation that changes them.

An example counts by what it is now: ``contribution`` maps its ``model_wrong``,
``retracted``, ``validation_state`` and ``validation_count`` to the counters it adds to; every write applies the
difference between the example's contribution before and after (``count_change``). Who
calls it:

- an example created or deleted: the ``post_save``/``post_delete`` receivers below (so the
  annotation services, the admin and fixtures are all counted);
- retracting: ``annotation.services.retract_example``;
- a validation recorded, its state settled: ``validation.consensus.settle_example``;
- bulk writes that bypass model signals (the vote importer's ``bulk_create``, the scale
  benchmark's ``COPY``): ``recount_rounds`` afterwards, in the same transaction;
- drift from anything else: ``manage.py reconcile_counters`` calls ``recount_rounds``.

Lock order, so two writers never deadlock: the example row, then the round's tally, then
the author's tally, then the hour's tally, then the vote tallies (in key order). The round tally is a single hot row per round: writers hold its lock only
from the counter update to their commit (the model's forward runs before the transaction).
"""

from collections import Counter
from datetime import UTC, datetime

from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q
from django.db.models.functions import TruncHour
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from annotation.models import AuthorTally, Example, RoundHourTally, RoundTally, RoundVoteTally, ValidationState
from dynabench import hotsql

_STATE_COLUMN = {
    ValidationState.PENDING: "pending",
    ValidationState.VERIFIED_CORRECT: "verified_correct",
    ValidationState.VERIFIED_INCORRECT: "verified_incorrect",
    ValidationState.FLAGGED: "flagged",
}
ROUND_COLUMNS = ("collected", "fooled", "verified_fooled", "retracted", *_STATE_COLUMN.values(), "validations")
AUTHOR_COLUMNS = ("collected", "fooled", "verified_fooled", "settled")
HOUR_COLUMNS = ("collected", "fooled", "verified_fooled")


def contribution(*, model_wrong: bool, retracted: bool, validation_state: str, validation_count: int) -> Counter:
    """Return the counters one example adds to: ``{"retracted": 1}`` when retracted, else
    ``collected`` 1, its state's column 1, ``settled`` 1 unless pending (an author's tally),
    ``fooled`` 1 if it fooled the model, ``verified_fooled`` 1 if it also was validated
    correct (``annotation.models.VALIDATED``), and ``("votes", settled, validation_count)`` 1
    (its ``RoundVoteTally`` bucket)."""
    if retracted:
        return Counter(retracted=1)
    found = Counter(collected=1)
    found[("votes", validation_state != ValidationState.PENDING, validation_count)] = 1
    found[_STATE_COLUMN[validation_state]] = 1
    if validation_state != ValidationState.PENDING:
        found["settled"] = 1
    if model_wrong:
        found["fooled"] = 1
        if validation_state == ValidationState.VERIFIED_CORRECT:
            found["verified_fooled"] = 1
    return found


def contribution_of(example) -> Counter:
    """``contribution`` of an ``Example`` instance as it is in memory."""
    return contribution(
        model_wrong=example.model_wrong, retracted=example.retracted, validation_state=example.validation_state,
        validation_count=example.validation_count,
    )


def hour_of(created_at) -> datetime:
    """The UTC hour (minutes and below zeroed) an example written at ``created_at`` counts in."""
    return created_at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def count_change(
    *, round_id: int, author_id: int, before: Counter | None, after: Counter | None, validations: int = 0, example=None
) -> None:
    """Add ``after - before`` (each a ``contribution`` or None) and ``validations`` new
    validations to the round's and the author's tallies, and, given the ``example`` (an
    ``Example``: its ``created_at`` hour and ``model_id``), to its hour's ``RoundHourTally``.
    Call inside the transaction of the write, after the example's row is written or locked. A
    tally row is created on its first increase; a decrease on a missing row is left to
    ``recount_rounds``."""
    delta = Counter(after or {})
    delta.subtract(before or {})
    if validations:
        delta["validations"] += validations
    delta = {name: n for name, n in delta.items() if n}
    if not delta:
        return
    changes = [
        (RoundTally, {"round_id": round_id}, {k: v for k, v in delta.items() if k in ROUND_COLUMNS}),
        (AuthorTally, {"round_id": round_id, "author_id": author_id}, {k: v for k, v in delta.items() if k in AUTHOR_COLUMNS}),
    ]
    if example is not None:
        keys = {"round_id": round_id, "hour": hour_of(example.created_at), "model_id": example.model_id or 0}
        changes.append((RoundHourTally, keys, {k: v for k, v in delta.items() if k in HOUR_COLUMNS}))
    for key in sorted(k for k in delta if isinstance(k, tuple)):
        changes.append((RoundVoteTally, {"round_id": round_id, "settled": key[1], "votes": key[2]}, {"examples": delta[key]}))
    _add_all([change for change in changes if change[2]])


def _update_sql(model, names: tuple, columns: tuple) -> str:
    """``UPDATE`` adding ``%s`` to each of ``columns`` of the ``model`` row found by ``names``."""
    sets = ", ".join(f"{hotsql.column(model, c)} = {hotsql.column(model, c)} + %s" for c in columns)
    where = " AND ".join(f"{hotsql.column(model, k)} = %s" for k in names)
    return f"UPDATE {hotsql.table(model)} SET {sets} WHERE {where}"


def _update_params(model, keys: dict, delta: dict) -> list:
    meta = model._meta
    return [*delta.values(), *(meta.get_field(k).get_db_prep_value(v, connection) for k, v in keys.items())]


def _add(model, keys: dict, delta: dict) -> None:
    """Add ``delta`` ({column: n}) to the ``model`` tally row found by ``keys``; create the row on its first increase."""
    if not delta:
        return
    names, columns = tuple(keys), tuple(delta)
    sql = hotsql.statement(f"tally:{model._meta.label}:{names}:{columns}", lambda: _update_sql(model, names, columns))
    if not hotsql.execute(sql, _update_params(model, keys, delta)):
        _create_missing(model, keys, delta)


def _add_all(changes: list[tuple]) -> None:
    """``_add`` each ``(model, keys, delta)`` of ``changes``, in their order (the lock order above).

    On PostgreSQL the updates go in one statement (data-modifying ``WITH`` queries, read in
    order by the final ``SELECT``, so the rows are locked in the same order as one by one): a
    submission's four tallies cost one round trip instead of four. A row that is not there
    yet is created afterwards, as ``_add`` does."""
    if connection.vendor != "postgresql" or len(changes) < 2:
        for change in changes:
            _add(*change)
        return
    shapes = tuple((model, tuple(keys), tuple(delta)) for model, keys, delta in changes)

    def build() -> str:
        parts = [f"t{i} AS ({_update_sql(*shape)} RETURNING 1)" for i, shape in enumerate(shapes)]
        counts = ", ".join(f"(SELECT COUNT(*) FROM t{i})" for i in range(len(shapes)))
        return f"WITH {', '.join(parts)} SELECT {counts}"

    name = "tallies:" + ";".join(f"{model._meta.label}:{names}:{columns}" for model, names, columns in shapes)
    params = [p for model, keys, delta in changes for p in _update_params(model, keys, delta)]
    updated = hotsql.fetch_one(hotsql.statement(name, build), params)
    for (model, keys, delta), rows in zip(changes, updated):
        if not rows:
            _create_missing(model, keys, delta)


def _create_missing(model, keys: dict, delta: dict) -> None:
    """Create the tally row ``keys`` holding ``delta``: its first increase (a decrease is left to ``recount_rounds``)."""
    if any(n < 0 for n in delta.values()):
        return  # the row went away with its round, or drifted: recount_rounds repairs it
    increments = {name: F(name) + n for name, n in delta.items()}
    try:
        with transaction.atomic():
            model.objects.create(**keys, **delta)
    except IntegrityError:  # created meanwhile by another writer
        model.objects.filter(**keys).update(**increments)


@receiver(post_save, sender=Example, dispatch_uid="annotation.counters.example_saved")
def _example_saved(sender, instance, created, raw=False, **kwargs):
    if created and not raw:
        count_change(round_id=instance.round_id, author_id=instance.author_id, before=None, after=contribution_of(instance), example=instance)


@receiver(post_delete, sender=Example, dispatch_uid="annotation.counters.example_deleted")
def _example_deleted(sender, instance, **kwargs):
    count_change(round_id=instance.round_id, author_id=instance.author_id, before=contribution_of(instance), after=None, example=instance)


# --- recounting ---------------------------------------------------------------------------


def _aggregates(columns) -> dict:
    """``{"n_<column>": Count(...)}`` for the tally ``columns`` (aliased: ``retracted`` and
    ``flagged`` are also ``Example`` fields)."""
    alive = Q(retracted=False)
    found = {
        "collected": Count("id", filter=alive),
        "fooled": Count("id", filter=alive & Q(model_wrong=True)),
        "verified_fooled": Count(
            "id", filter=alive & Q(model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT)
        ),
        "retracted": Count("id", filter=Q(retracted=True)),
        "settled": Count("id", filter=alive & ~Q(validation_state=ValidationState.PENDING)),
        "validations": Count("validations"),
    }
    for state, column in _STATE_COLUMN.items():
        found[column] = Count("id", filter=alive & Q(validation_state=state))
    return {f"n_{name}": found[name] for name in columns}


def _unalias(row: dict) -> dict:
    return {name.removeprefix("n_"): n for name, n in row.items()}


def recount_rounds(round_ids, *, fix: bool = True) -> int:
    """Recount the tallies of the rounds ``round_ids`` from their examples and validations;
    return how many tally rows were wrong (missing, different or left over) and, with
    ``fix``, repair them. Each round is recounted in its own transaction with its tally row
    locked first, so a write that commits meanwhile is either counted here or applied after.
    ``validations`` counts the round's validation rows (the ``validation`` app's table,
    reached through ``Example.validations``)."""
    wrong = 0
    for round_id in round_ids:
        with transaction.atomic():
            if fix:
                RoundTally.objects.get_or_create(round_id=round_id)
                RoundTally.objects.select_for_update().filter(round_id=round_id).values_list("pk").first()
            examples = Example.objects.filter(round_id=round_id)
            expected = _unalias(examples.aggregate(**_aggregates([c for c in ROUND_COLUMNS if c != "validations"])))
            expected |= _unalias(examples.aggregate(**_aggregates(["validations"])))
            stored = RoundTally.objects.filter(round_id=round_id).values(*ROUND_COLUMNS).first() or dict.fromkeys(ROUND_COLUMNS, 0)
            if stored != expected:
                wrong += 1
                if fix:
                    RoundTally.objects.filter(round_id=round_id).update(**expected)
            per_author = {
                row.pop("author_id"): _unalias(row)
                for row in examples.order_by().values("author_id").annotate(**_aggregates(AUTHOR_COLUMNS))
            }
            stored_authors = {
                row.pop("author_id"): row for row in AuthorTally.objects.filter(round_id=round_id).values("author_id", *AUTHOR_COLUMNS)
            }
            stale = [a for a in stored_authors if a not in per_author]
            changed = {a: row for a, row in per_author.items() if stored_authors.get(a) != row}
            wrong += len(stale) + len(changed)
            if fix and (stale or changed):
                AuthorTally.objects.filter(round_id=round_id, author_id__in=[*stale, *changed]).delete()
                AuthorTally.objects.bulk_create(
                    [AuthorTally(round_id=round_id, author_id=a, **row) for a, row in changed.items()], batch_size=2000
                )
            wrong += _recount_hours(round_id, examples, fix=fix)
            wrong += _recount_votes(round_id, examples, fix=fix)
    return wrong


def hour_rows(examples) -> dict:
    """``{(hour, model_id or 0): {"collected", "fooled", "verified_fooled"}}`` counted from the
    ``examples`` queryset (retracted ones left out; hours in UTC): what ``RoundHourTally``
    holds. Used by ``recount_rounds`` and the migration's backfill."""
    grouped = (
        examples.filter(retracted=False).order_by().annotate(hour=TruncHour("created_at", tzinfo=UTC))
        .values("hour", "model_id").annotate(**_aggregates(HOUR_COLUMNS))
    )
    found: dict = {}
    for row in grouped:
        key = (row.pop("hour"), row.pop("model_id") or 0)
        counts = found.setdefault(key, dict.fromkeys(HOUR_COLUMNS, 0))
        for name, n in _unalias(row).items():
            counts[name] += n
    return {key: counts for key, counts in found.items() if any(counts.values())}


def _recount_hours(round_id, examples, *, fix: bool) -> int:
    expected = hour_rows(examples)
    stored = {
        (row.pop("hour"), row.pop("model_id")): row
        for row in RoundHourTally.objects.filter(round_id=round_id).values("hour", "model_id", *HOUR_COLUMNS)
    }
    stored = {key: row for key, row in stored.items() if any(row.values())}  # rows gone to zero are no drift
    wrong = len(set(stored) ^ set(expected)) + sum(1 for key in expected.keys() & stored.keys() if stored[key] != expected[key])
    if fix and wrong:
        RoundHourTally.objects.filter(round_id=round_id).delete()
        RoundHourTally.objects.bulk_create(
            [RoundHourTally(round_id=round_id, hour=hour, model_id=model, **row) for (hour, model), row in expected.items()],
            batch_size=2000,
        )
    return wrong


def vote_rows(examples) -> dict:
    """``{(settled, validation_count): examples}`` counted from the ``examples`` queryset
    (retracted ones left out): what ``RoundVoteTally`` holds."""
    grouped = (
        examples.filter(retracted=False).order_by()
        .annotate(settled=ExpressionWrapper(~Q(validation_state=ValidationState.PENDING), output_field=BooleanField()))
        .values("settled", "validation_count").annotate(n=Count("id"))
    )
    found: Counter = Counter()
    for row in grouped:
        found[(bool(row["settled"]), row["validation_count"])] += row["n"]
    return {key: n for key, n in found.items() if n}


def _recount_votes(round_id, examples, *, fix: bool) -> int:
    expected = vote_rows(examples)
    stored = {
        (settled, votes): n
        for settled, votes, n in RoundVoteTally.objects.filter(round_id=round_id).values_list("settled", "votes", "examples")
        if n
    }
    wrong = len(set(stored) ^ set(expected)) + sum(1 for key in expected.keys() & stored.keys() if stored[key] != expected[key])
    if fix and wrong:
        RoundVoteTally.objects.filter(round_id=round_id).delete()
        RoundVoteTally.objects.bulk_create(
            [RoundVoteTally(round_id=round_id, settled=settled, votes=votes, examples=n) for (settled, votes), n in expected.items()]
        )
    return wrong
