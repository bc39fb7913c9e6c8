"""An endpoint model answers a round's validated examples only while the round's endpoint budget lasts:
the job stops that model when it is spent, says so, and rates the examples by the models that answered."""

from annotation.models import TransferRate, TransferResult
from tasks.models import ModelCall
from validation.jobs import measure_transfer
from validation.services import record_validation
from validation.tests.conftest import make_example


def test_it_stops_at_the_call_budget_and_says_how_many_were_left(sentiment_task, annotator, owner, make_endpoint_model):
    round = sentiment_task.current_round()
    round.endpoint_call_budget = 2
    round.save(update_fields=["endpoint_call_budget"])
    examples = [make_example(sentiment_task, annotator, text=f"sentence number {i}") for i in range(4)]
    for example in examples:
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    endpoint = make_endpoint_model(sentiment_task, published=True)

    summary = measure_transfer(round.pk)

    assert f"{endpoint.name}: the round's endpoint budget is spent (2 examples left unanswered)" in summary
    assert TransferResult.objects.filter(model=endpoint).count() == 2
    assert ModelCall.objects.filter(round=round, model=endpoint, purpose="transfer", status="ok").count() == 2
    assert TransferRate.objects.count() == 2 and set(TransferRate.objects.values_list("tried", flat=True)) == {1}
