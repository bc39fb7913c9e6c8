"""Gold checks: a validator's answer to a gold item the review queue served them.

The answer is scored against the gold verdict on the server, never a vote (``counts=False``,
``gold_check=True``); it updates the validator's gold standing (``validation.gold.update_standing``)
and, when that changes whether their votes count, the consensus of the examples they voted on
(``validation.standing.apply_standing``). The validator is answered as after any vote that does not
settle: the example presented as pending (``validation.gold.present``).
"""

from django.utils import timezone

from validation import crowd_progress, gold, standing
from validation.metadata import clean_metadata
from validation.models import Validation
from validation.queue import LEASE_DURATION


def record_gold_check(*, example, validator, label, metadata, assignment, submission_key: str = "") -> Validation:
    """Store ``validator``'s answer to a gold item served to them (``assignment``), update their
    standing and, when it changed, the consensus of the examples they voted on; return the
    validation with the example presented as pending, as after any vote that does not settle.
    Call inside ``validation.services.record_validation``'s transaction (the example row locked)."""
    clean = clean_metadata(example=example, label=label, mode=Validation.Mode.USER, metadata=metadata or {})
    validation = Validation.objects.create(
        example=example, validator=validator, label=label, mode=Validation.Mode.USER, metadata=clean,
        counts=False, gold_check=True, submission_key=submission_key,
    )
    assignment.answered_at = timezone.now()
    assignment.save(update_fields=["answered_at"])
    crowd_progress.note_validation(validator=validator, round=example.round)
    changed = gold.update_standing(task=example.round.task, validator=validator)
    if changed is not None:
        standing.apply_standing(changed)
    gold.present(example, validator=validator, served_at=assignment.served_at, lease=LEASE_DURATION)
    example.leased_to_id = example.leased_until = None
    validation.replayed = False
    return validation
