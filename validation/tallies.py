"""Tallies: how settling an example moves its round's and author's running counts.

The round page, the dashboard and the vote budget read ``annotation.models.RoundTally``,
``AuthorTally`` and ``RoundVoteTally`` instead of counting examples; ``annotation.counters``
keeps them. When consensus changes an example's state or vote count
(``validation.consensus.settle_example``), ``move_example`` takes the example out of the tallies
as it counted before and puts it back as it counts now, in the same transaction.
``manage.py reconcile_counters`` rechecks them.
"""

from annotation import counters


def move_example(example, *, state: str, validation_count: int) -> None:
    """Move ``example``'s contribution to its round's and author's tallies from the one it had
    (``example`` as read under its row lock: its old state and count) to the one ``state`` and
    ``validation_count`` give it. Call in the transaction that settles it."""
    counters.count_change(
        round_id=example.round_id, author_id=example.author_id, before=counters.contribution_of(example),
        after=counters.contribution(
            model_wrong=example.model_wrong, retracted=example.retracted, validation_state=state,
            validation_count=validation_count,
        ),
        example=example,
    )
