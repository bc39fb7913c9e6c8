"""Replay: a verdict sent twice with one submission key is recorded once.

A form or API call carries a one-time key (``dynabench/idempotency.py``). ``with_key`` finds the
validation a validator already recorded with it; ``replayed`` answers the repeat with that
validation (``replayed`` True) and its example as the validator saw it then, so a double click
never counts twice or fails as "already validated".
"""

from dynabench import hotsql
from validation import gold
from validation.models import GoldAssignment, Validation
from validation.queue import LEASE_DURATION


def with_key_sql() -> str:
    return hotsql.keyed_id_sql(Validation, "validator")


def with_key(validator, submission_key: str) -> Validation | None:
    """The validator's validation with ``submission_key``, or None: one fixed statement that can
    use the key's index (``hotsql.keyed_id_sql``), then the validation itself if there is one."""
    row = hotsql.fetch_one(hotsql.statement("validation.with_key", with_key_sql), [validator.pk, submission_key])
    return Validation.objects.get(pk=row[0]) if row else None


def replayed(first: Validation, *, example, validator) -> Validation:
    """``first`` (the validation an earlier submission with the same key recorded) as the answer
    to a repeat: ``replayed`` True, its example as the validator saw it then (a gold check's
    example presented as pending again, as ``validation.gold_checks.record_gold_check`` answered)."""
    if first.example_id == example.pk:
        if first.gold_check:
            served = GoldAssignment.objects.filter(gold_item__example_id=example.pk, validator=validator).first()
            if served is not None:
                gold.present(example, validator=validator, served_at=served.served_at, lease=LEASE_DURATION)
                example.leased_to_id = example.leased_until = None
        first.example = example
    first.replayed = True
    return first
