"""On the validation page, an optional field the annotator left empty (an image or audio task's note)
is not shown: no heading over an empty line. A filled one is."""

import pytest

from validation.queue_selectors import review_display
from validation.tests.conftest import make_example

NOTE = {"name": "note", "label": "What makes it tricky? (optional)", "max_length": 300, "required": False}


@pytest.fixture
def with_note(sentiment_task):
    sentiment_task.config = {**sentiment_task.config, "input_fields": [*sentiment_task.config["input_fields"], NOTE]}
    sentiment_task.save(update_fields=["config"])
    return sentiment_task


def test_an_empty_note_is_left_out(with_note, annotator):
    example = make_example(with_note, annotator)
    example.input["note"] = ""

    assert [heading for heading, _ in review_display(example).written] == ["The annotator's sentence"]


def test_a_filled_note_is_shown(with_note, annotator):
    example = make_example(with_note, annotator)
    example.input["note"] = "sarcasm"

    assert ("What makes it tricky? (optional)", "sarcasm") in review_display(example).written
