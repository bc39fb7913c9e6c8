"""Banning a user from a task takes their pending examples out of the review queue."""

from annotation.models import Example
from tasks import access
from validation.queue import next_example_for


def test_a_banned_authors_pending_examples_leave_the_queue(owner, annotator, validator, sentiment_task):
    round = sentiment_task.current_round()
    context = round.contexts.first()
    example = Example.objects.create(
        round=round, context=context, author=annotator, input={"text": "x"}, target={"label": "positive"}, model_wrong=True
    )
    access.ban_user(task=sentiment_task, user=annotator, acting_user=owner)

    assert next_example_for(validator=validator, round=round) is None
    access.lift_ban(task=sentiment_task, user=annotator, acting_user=owner)
    assert next_example_for(validator=validator, round=round) == example
