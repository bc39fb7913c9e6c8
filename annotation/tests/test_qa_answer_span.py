"""A QA example's answer must really be a span of the passage."""

import pytest

from annotation.models import Example
from annotation.services import create_example
from annotation.tests.conftest import model_answer
from dynabench.errors import RuleError

QUESTION = "When did the fire of London begin?"


def passage_of(context):
    return context.data["passage"]


def test_it_stores_an_answer_that_is_a_span_of_the_passage(annotator, qa_context):
    passage = passage_of(qa_context)
    start = passage.index("Pudding Lane") if "Pudding Lane" in passage else 4
    text = passage[start:start + 12]
    example = create_example(
        user=annotator, context=qa_context, input={"question": QUESTION},
        target={"answers": [{"text": text, "answer_start": start}]},
    )
    example.refresh_from_db()
    assert example.target == {"answers": [{"text": text, "answer_start": start}]}
    output = example.model_output
    assert {"answer", "start", "end", "score"} <= set(output)
    assert passage[output["start"]:output["end"]] == output["answer"]


def test_it_trims_whitespace_around_the_selection_and_moves_the_start(annotator, qa_context):
    passage = passage_of(qa_context)
    start = passage.index(" ") + 1  # the second word, selected with the space before it
    word = passage[start:].split(" ")[0]
    example = create_example(
        user=annotator, context=qa_context, input={"question": QUESTION},
        target={"answers": [{"text": " " + word + " ", "answer_start": start - 1}]},
    )
    assert example.target["answers"][0] == {"text": word, "answer_start": start}


@pytest.mark.parametrize("shift", [1, -1, 1000])
def test_it_refuses_an_answer_at_the_wrong_position(annotator, qa_context, shift):
    passage = passage_of(qa_context)
    start = 10
    with pytest.raises(RuleError) as error:
        create_example(
            user=annotator, context=qa_context, input={"question": QUESTION},
            target={"answers": [{"text": passage[start:start + 8], "answer_start": start + shift}]},
        )
    assert (error.value.code, error.value.field) == ("answer_not_in_passage", "answer")
    assert not Example.objects.exists()


def test_it_refuses_an_answer_that_is_not_in_the_passage(annotator, qa_context):
    with pytest.raises(RuleError) as error:
        create_example(
            user=annotator, context=qa_context, input={"question": QUESTION},
            target={"answers": [{"text": "in the year 3000", "answer_start": 0}]},
        )
    assert error.value.code == "answer_not_in_passage"


def test_it_refuses_an_empty_selection(annotator, qa_context):
    with pytest.raises(RuleError) as error:
        create_example(user=annotator, context=qa_context, input={"question": QUESTION}, target={"answers": [{"text": "", "answer_start": 0}]})
    assert (error.value.code, error.value.field) == ("required", "answer")


def test_it_says_the_model_was_not_fooled_when_the_answer_is_the_models(annotator, qa_task, qa_context):
    passage = passage_of(qa_context)
    predicted = model_answer(qa_task, {"question": QUESTION, "passage": passage})
    same = create_example(
        user=annotator, context=qa_context, input={"question": QUESTION},
        target={"answers": [{"text": predicted["answer"], "answer_start": predicted["start"]}]},
    )
    assert same.model_wrong is False
