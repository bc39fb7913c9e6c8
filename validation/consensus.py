"""Consensus: an example's validation state, decided from its counted votes.

``settle_example`` is the one place an example's ``validation_state`` and ``*_count`` columns
change after a validation: the state comes from the validations that count
(``Validation.counts``) under the task's ``ConsensusPolicy`` (``calculations.derive_state``: the
latest owner decision decides outright, else the first label to reach ``needed`` votes, or early
agreement), the round's and author's tallies move with it (``validation.tallies``), the lease is cleared once it is settled,
and ``example_settled`` is sent when the transaction commits. An AI validator's vote counts only
as its ``AIVote.counted_as`` says (``validation/judge_policy.py``): ``vote`` adds one counted vote once a
person has voted (an AI vote never settles an example alone), ``triage`` lowers the votes needed by one
(never below one); the ``*_count`` columns count people's votes only. Recording a verdict
(``validation.services``), a validator's standing changing (``validation.standing``), an owner's
gold item and the vote importer all call it.
"""

import dataclasses

from django.db import transaction

from annotation.models import Example, ValidationState
from tasks.signals import example_settled
from validation import tallies
from validation.calculations import ConsensusPolicy, derive_state, tally
from validation.judge_models import AIVote
from validation.models import Validation


def settle_example(example, *, release_lease_of=None) -> str:
    """Recompute ``example``'s state and counters from its counted validations
    (``Validation.counts``) under the task's ``ConsensusPolicy`` and save them.

    Call inside the transaction that changed its validations, with the row locked (``example``
    as read under the lock: its old state is what the round's tally counted). The round's and
    author's tallies (``validation.tallies``) move from the old state to the new one.
    Returns the new state. The lease is cleared
    once the example is settled, or when it is held by ``release_lease_of`` (the validator who just judged it).
    """
    rows = list(Validation.objects.filter(example_id=example.pk, counts=True).order_by("id").values_list("label", "mode"))
    policy = ConsensusPolicy.from_config(example.round.task.config)
    ai = AIVote.objects.filter(example_id=example.pk).exclude(counted_as=AIVote.CountedAs.NOT).values_list("label", "counted_as")
    ai_rows = [(label, Validation.Mode.USER) for label, how in ai if how == AIVote.CountedAs.VOTE and rows]
    if any(how == AIVote.CountedAs.TRIAGE for _, how in ai):
        policy = dataclasses.replace(policy, needed=max(1, policy.needed - 1))
    state = derive_state(rows + ai_rows, policy)
    fields = {**tally(label for label, _ in rows), "validation_state": state}
    if state != ValidationState.PENDING or (release_lease_of is not None and example.leased_to_id == release_lease_of.pk):
        fields.update(leased_to=None, leased_until=None)
    Example.objects.filter(pk=example.pk).update(**fields)
    tallies.move_example(example, state=state, validation_count=fields["validation_count"])
    previous = example.validation_state
    for name, value in fields.items():
        setattr(example, name if name != "leased_to" else "leased_to_id", value)
    if state != previous and state != ValidationState.PENDING:
        example_id, author_id = example.pk, example.author_id
        transaction.on_commit(lambda: example_settled.send(
            sender=Example, example_id=example_id, author_id=author_id, state=str(state),
        ))
    return state
