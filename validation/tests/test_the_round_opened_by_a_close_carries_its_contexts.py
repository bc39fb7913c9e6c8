"""Closing a round with "open the next round in the same step" opens it ready to write in: the closed
round's active contexts (a retired one stays behind) and loop rule are carried over, as the console's
"Open the next round" does by default, so the new round lacks nothing (``round_gaps``)."""

from tasks.models import MLModel, Round
from tasks.services import round_gaps
from validation.round_close import close_round
from validation.services import record_validation
from validation.tests.conftest import make_example


def test_the_round_opened_by_a_close_carries_its_contexts(sentiment_task, annotator, owner, tiny_classifier_dir):
    round1 = sentiment_task.current_round()
    model = MLModel.objects.create(task=sentiment_task, owner=owner, name="in-loop", path=str(tiny_classifier_dir), status=MLModel.Status.EVALUATED)
    round1.target_models.add(model)
    Round.objects.filter(pk=round1.pk).update(loop_rule=Round.LoopRule.LEAST_FOOLED)
    retired = round1.contexts.create(uid="retired", data=round1.contexts.first().data, active=False)
    for _ in range(10):
        record_validation(example=make_example(sentiment_task, annotator), validator=owner, label="correct", mode="owner")
    active = set(round1.contexts.filter(active=True).values_list("uid", flat=True))

    close_round(round=Round.objects.get(pk=round1.pk), acting_user=owner, open_next=True)

    round2 = sentiment_task.rounds.get(number=2)
    assert set(round2.contexts.values_list("uid", flat=True)) == active and retired.uid not in active
    assert round2.loop_rule == Round.LoopRule.LEAST_FOOLED and list(round2.target_models.all()) == [model]
    assert round_gaps(round2) == []
