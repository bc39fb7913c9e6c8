"""Standing: whether a validator's votes count toward consensus.

A new user-mode vote counts (``vote_counts``) unless the validator's gold standing excludes them
(``validation.gold.vote_standing``: gold accuracy below the task's threshold, or a crowd worker
still on gold probation) or, for a crowd account, they entered from the same address as the
author or as a validator already counted on the example (``validation.identity``: one person, one
vote). An owner's decision always counts. When a gold check changes a validator's standing
(``validation.gold.update_standing``), ``apply_standing`` makes their earlier votes count or stop
counting and recomputes the consensus of the examples it changes (``validation.consensus``).
"""

from django.db import transaction

from annotation.models import Example
from tasks.models import Round
from validation import consensus, gold, identity
from validation.models import Validation, ValidatorStanding


def vote_counts(*, example, validator, mode) -> bool:
    """Whether ``validator``'s new validation of ``example`` in ``mode`` counts toward consensus:
    always in owner mode; in user mode unless their gold standing excludes them, or (a crowd
    account) they share an entry address with the author or a counted validator of ``example``."""
    if mode == Validation.Mode.OWNER:
        return True
    excluded, crowd_account = gold.vote_standing(task=example.round.task, validator=validator)
    # Only crowd accounts have entry addresses to share (``identity``).
    return not excluded and (
        not crowd_account or identity.same_person_as(example=example, validator=validator) is None
    )


def apply_standing(standing: ValidatorStanding) -> int:
    """Make the votes of ``standing.validator`` on ``standing.task`` count or stop counting, as
    ``standing.excluded`` says, and recompute the consensus of every example it changes; return
    how many examples were recomputed.

    Only examples of open rounds that are not gold items are touched: a closed round's
    datasets stay as they were built. An example that loses its settling votes is pending
    again and goes back to the review queue. Rows are locked in id order.
    """
    counts = not standing.excluded
    votes = Validation.objects.filter(
        validator_id=standing.validator_id, mode=Validation.Mode.USER, gold_check=False,
        example__round__task_id=standing.task_id, example__round__status=Round.Status.OPEN,
        example__gold__isnull=True,
    ).exclude(counts=counts)
    with transaction.atomic():
        rows = list(votes.order_by("pk").values_list("pk", "example_id"))
        if counts:
            # Reinstated votes count only where this validator is a distinct worker (``identity``).
            distinct = []
            for pk, example_id in rows:
                example = Example(pk=example_id, author_id=Example.objects.values_list("author_id", flat=True).get(pk=example_id))
                if identity.same_person_as(example=example, validator=standing.validator) is None:
                    distinct.append((pk, example_id))
            rows = distinct
        Validation.objects.filter(pk__in=[pk for pk, _ in rows]).update(counts=counts)
        examples = (
            Example.objects.select_for_update(of=("self",))
            .filter(pk__in=sorted({e for _, e in rows}))
            .select_related("round__task")
            .order_by("pk")
        )
        recomputed = 0
        for example in examples:
            consensus.settle_example(example)
            recomputed += 1
        standing.recomputed_examples = recomputed
        standing.save(update_fields=["recomputed_examples"])
    return recomputed
