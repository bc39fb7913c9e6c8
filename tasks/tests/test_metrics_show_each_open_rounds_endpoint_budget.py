"""``/metrics`` shows what each open round's endpoint models used against the round's budget."""

from dynabench.tests.metrics_support import scrape, value
from tasks.loop.gate_models import RoundSpend


def test_it_shows_the_calls_and_tokens_used_and_the_limits_set(client, sentiment_task):
    # given
    round_ = sentiment_task.current_round()
    round_.endpoint_call_budget = 100
    round_.save()
    RoundSpend.objects.create(round=round_, calls=91, tokens=5000)
    # when
    text = scrape(client)
    # then
    labels = {"task": "sentiment", "round": round_.number}
    assert value(text, "dynabench_round_budget_used", unit="calls", **labels) == 91
    assert value(text, "dynabench_round_budget_used", unit="tokens", **labels) == 5000
    assert value(text, "dynabench_round_budget_limit", unit="calls", **labels) == 100
    assert value(text, "dynabench_round_budget_limit", unit="tokens", **labels) is None
