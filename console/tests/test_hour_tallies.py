"""The per-hour, per-model tallies (``RoundHourTally``) follow every create, validation,
retraction and deletion in its transaction: they always equal a recount of the examples, and
the owner's dashboard reads its per-hour and per-model figures from them at any round size."""

import random
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from annotation import counters
from annotation.models import Example, RoundHourTally
from annotation.services import retract_example
from tasks.models import MLModel
from console.selectors import per_model_hour, round_dashboard
from validation.services import record_validation
from validation.tests.conftest import leased, make_example, make_user

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _stored(round):
    rows = RoundHourTally.objects.filter(round=round).values("hour", "model_id", *counters.HOUR_COLUMNS)
    return {(r.pop("hour"), r.pop("model_id")): r for r in rows if any(r[c] for c in counters.HOUR_COLUMNS)}


def test_hour_tallies_equal_a_recount_after_creates_validations_retractions_and_deletes(sentiment_task, annotator, owner, monkeypatch):
    rng = random.Random(5)
    round = sentiment_task.current_round()
    models = [MLModel.objects.create(task=sentiment_task, name=f"m{i}", path=f"/nowhere/{i}") for i in range(2)]
    people = [make_user(f"v{i}", "validator") for i in range(3)]
    examples = []
    for i in range(24):  # ten hours, two models and no model
        monkeypatch.setattr(timezone, "now", lambda i=i: START + timedelta(minutes=25 * i))
        examples.append(make_example(sentiment_task, annotator, model_wrong=rng.random() < 0.7, model=rng.choice([*models, None])))
    monkeypatch.undo()
    for e in examples:
        for person in rng.sample(people, rng.randint(0, 3)):
            e.refresh_from_db()
            if e.validation_state != "pending":
                break
            record_validation(example=leased(e, person), validator=person, label=rng.choice(["correct", "correct", "incorrect"]))
        if rng.random() < 0.2:
            record_validation(example=e, validator=owner, label="correct", mode="owner")
        if rng.random() < 0.15:
            retract_example(example=e, user=annotator)
    examples[0].refresh_from_db()  # post_delete counts the instance as loaded (the admin loads it fresh)
    examples[0].delete()

    expected = counters.hour_rows(Example.objects.filter(round=round))
    assert _stored(round) == expected
    assert len({hour for hour, _ in expected}) == 10 and {model for _, model in expected} == {0, *(m.pk for m in models)}
    assert sum(r["verified_fooled"] for r in expected.values()) > 0
    assert counters.recount_rounds([round.pk], fix=False) == 0


def test_reconcile_repairs_drifted_hour_tallies(sentiment_task, annotator):
    round = sentiment_task.current_round()
    make_example(sentiment_task, annotator)
    RoundHourTally.objects.filter(round=round).update(collected=9)
    RoundHourTally.objects.create(round=round, hour=START, model_id=0, collected=4)

    assert counters.recount_rounds([round.pk], fix=False) == 2
    counters.recount_rounds([round.pk])
    assert counters.recount_rounds([round.pk], fix=False) == 0
    assert [r["collected"] for r in per_model_hour(round)] == [1]


def test_the_dashboard_reads_hours_and_models_from_the_tallies(owner, annotator, sentiment_task):
    round = sentiment_task.current_round()
    model = MLModel.objects.create(task=sentiment_task, name="model-a", path="/nowhere/a")
    round.target_models.add(model)
    for i in range(4):
        make_example(sentiment_task, annotator, model_wrong=i < 3, model=model)
    RoundHourTally.objects.filter(round=round).update(collected=1000)  # what the page shows comes from here

    board = round_dashboard(round)

    assert [b.collected for b in board.per_hour] == [1000]
    assert [(m.name, m.collected, m.fooled) for m in board.per_model] == [("model-a", 1000, 3)]
