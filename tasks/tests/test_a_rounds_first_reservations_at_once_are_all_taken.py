"""The first requests of a round reserve at once: the one that finds no ``RoundSpend`` row makes it,
and one that finds the row made by a concurrent request meanwhile still reserves. Before, that
second one was refused as "budget spent" on a round with budget left (seen as one of twenty
simultaneous chat turns failing on a fresh round)."""

from tasks.loop import gate
from tasks.loop.gate_models import RoundSpend


def test_a_reservation_that_finds_the_row_a_concurrent_one_made_is_taken(make_endpoint_model, sentiment_task, monkeypatch):
    # given: a fresh round with budget left, and a concurrent request that makes the round's row
    # between this request's first UPDATE (no row) and its get_or_create
    round_ = sentiment_task.current_round()
    round_.endpoint_call_budget = 10
    round_.save()
    model = make_endpoint_model(sentiment_task)
    made = RoundSpend.objects.get_or_create

    def made_meanwhile(**kwargs):
        RoundSpend.objects.create(round=round_, calls=1)  # the concurrent request's own first reservation
        return made(**kwargs)

    monkeypatch.setattr(RoundSpend.objects, "get_or_create", made_meanwhile)
    # when
    with gate.admit(model, "loop", round=round_) as admission:
        reservation = admission.reserve([{"role": "user", "content": "hello"}])
    # then
    assert reservation is not None
    assert RoundSpend.objects.get(round=round_).calls == 2
