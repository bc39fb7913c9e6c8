"""A round's tallies follow every write in its transaction: they always equal a recount."""

import random

from annotation import counters
from annotation.models import Example
from annotation.selectors import counts_by_author, example_counts, round_counts, user_counts
from annotation.services import retract_example
from validation.round_statistics import state_counts
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def _recounted(round):
    examples = Example.objects.filter(round=round)
    states = {s: examples.filter(retracted=False, validation_state=s).count() for s in state_counts(round)}
    return example_counts(examples), states


def test_tallies_equal_a_recount_after_creates_validations_and_retractions(sentiment_task, annotator, owner):
    rng = random.Random(11)
    round = sentiment_task.current_round()
    authors = [annotator, make_user("second", "annotator")]
    people = [make_user(f"v{i}", "validator") for i in range(4)]
    examples = [make_example(sentiment_task, rng.choice(authors), model_wrong=rng.random() < 0.6) for _ in range(30)]
    for e in examples:
        for person in rng.sample(people, rng.randint(0, 4)):
            e.refresh_from_db()
            if e.validation_state != "pending":
                break
            label = rng.choice(["correct", "correct", "incorrect", "flagged"])
            record_validation(example=leased(e, person), validator=person, label=label, metadata={"flag_reason": "odd"} if label == "flagged" else None)
        if rng.random() < 0.2:
            record_validation(example=e, validator=owner, label=rng.choice(["correct", "incorrect"]), mode="owner")
        if rng.random() < 0.15:
            retract_example(example=e, user=e.author)
            retract_example(example=e, user=e.author)  # twice is harmless and counted once

    counts, states = _recounted(round)
    assert round_counts(round) == counts and counts.collected < 30 and counts.verified_fooled > 0
    assert state_counts(round) == states
    assert dict(counts_by_author(round)) == {a.pk: example_counts(Example.objects.filter(round=round, author=a)) for a in authors}
    assert user_counts(annotator, task=sentiment_task) == example_counts(Example.objects.filter(author=annotator))
    assert round.tally.validations == sum(e.validations.count() for e in examples)
    assert counters.recount_rounds([round.pk], fix=False) == 0


def test_a_deleted_example_leaves_the_tallies(sentiment_task, annotator):
    round = sentiment_task.current_round()
    keep, gone = make_example(sentiment_task, annotator), make_example(sentiment_task, annotator, model_wrong=False)

    gone.delete()

    assert round_counts(round).collected == 1 and round_counts(round).fooled == 1
    assert counters.recount_rounds([round.pk], fix=False) == 0 and keep.pk


def test_reconcile_repairs_a_drifted_tally(sentiment_task, annotator):
    round = sentiment_task.current_round()
    make_example(sentiment_task, annotator)
    round.tally.__class__.objects.filter(round=round).update(collected=99, pending=7)
    round.author_tallies.update(fooled=5)

    assert counters.recount_rounds([round.pk], fix=False) == 2
    assert counters.recount_rounds([round.pk]) == 2
    assert round_counts(round).collected == 1 and user_counts(annotator).fooled == 1
    assert counters.recount_rounds([round.pk], fix=False) == 0
