"""``validation.queue_selectors.review_display``: an example in the validator's words."""

from validation.queue_selectors import review_display
from validation.tests.conftest import make_example


def test_qa_marks_the_annotators_span(qa_task, annotator):
    example = make_example(qa_task, annotator)
    display = review_display(example)
    answer = example.target["answers"][0]
    marked = [s.text for s in display.answer["segments"] if s.yours]
    assert marked == [answer["text"]]
    assert display.passage_heading == "Passage"
    assert display.context == [] and display.written == [("Question", example.input["question"])]


def test_annotator_fields_are_headed_for_the_validator(sentiment_task, annotator):
    display = review_display(make_example(sentiment_task, annotator))
    assert [h for h, _ in display.context] == ["Prompt sentence"]
    assert [h for h, _ in display.written] == ["The annotator's sentence"]
    assert display.passage_heading is None


def test_a_review_label_in_the_config_wins_and_unlabelled_fields_get_words(sentiment_task, annotator):
    config = sentiment_task.config
    sentiment_task.config = {
        **config,
        "context_fields": [{"name": "prompt"}],
        "input_fields": [{**config["input_fields"][0], "review_label": "Rewritten sentence"}],
    }
    sentiment_task.save()
    display = review_display(make_example(sentiment_task, annotator))
    assert display.context[0][0] == "Prompt" and display.written[0][0] == "Rewritten sentence"
