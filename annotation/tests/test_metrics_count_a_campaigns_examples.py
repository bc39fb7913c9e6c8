"""``/metrics`` reads a campaign's examples written and fooling per task and open round from the
running tallies, so an operator sees the rate at which a round fills."""

from annotation.services import create_example
from annotation.tests.conftest import model_label, other_label
from dynabench.tests.metrics_support import scrape, value

TEXT = "The waiter was friendly but the soup was cold."


def test_it_counts_the_examples_written_and_fooling_in_the_open_round(client, annotator, sentiment_task, sentiment_context):
    # given
    label = model_label(sentiment_task, TEXT)
    round_number = sentiment_context.round.number
    # when
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": label})
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT + " Again."},
                   target={"label": other_label(sentiment_task, model_label(sentiment_task, TEXT + " Again."))})
    # then
    text = scrape(client)
    assert value(text, "dynabench_examples_written_total", task="sentiment", round=round_number) == 2
    assert value(text, "dynabench_examples_fooling_total", task="sentiment", round=round_number) == 1
    assert value(text, "dynabench_examples_validated_total", task="sentiment", round=round_number, outcome="correct") == 0


def test_an_open_round_without_examples_reports_zero(client, sentiment_task):
    text = scrape(client)

    assert value(text, "dynabench_examples_written_total", task="sentiment", round=sentiment_task.current_round().number) == 0
