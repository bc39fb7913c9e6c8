"""On a visual question answering task a validator may add their own answer to the question with a
verdict; the validated example's final target keeps every such answer after the annotator's, up
to the task's ``vqa_answers``, and refuses more with a message that says what to do; a flag or a
kind without answers takes none."""

import pytest
from django.urls import reverse

from annotation.models import Example
from dynabench.errors import RuleError
from tasks.models import Context
from tests.vqa_support import vqa_task
from validation.models import Validation
from validation.selectors import validated_examples
from validation.services import record_validation
from validation.tests.conftest import leased, make_example


@pytest.fixture
def question(owner, annotator):
    task = vqa_task(owner)
    task.config = {**task.config, "validations_needed": 3, "vqa_answers": 3}
    task.save()
    round = task.current_round()
    context = Context.objects.create(round=round, uid="a" * 64, data={"image": "a" * 64})
    return Example.objects.create(round=round, context=context, author=annotator, input={"image": "a" * 64, "question": "what colour"},
                                  target={"answers": ["green"]}, model_output={"answer": "red", "score": 0.4}, model_wrong=True)


def test_the_final_target_keeps_the_validators_answers_after_the_annotators(question, validators):
    first, second, third = validators
    record_validation(example=leased(question, first), validator=first, label="correct", metadata={"own_answer": " Green "})
    record_validation(example=leased(question, second), validator=second, label="correct", metadata={"own_answer": "light green"})
    with pytest.raises(RuleError, match="already has its 3 answers") as refused:
        record_validation(example=leased(question, third), validator=third, label="correct", metadata={"own_answer": "lime"})
    assert (refused.value.code, refused.value.field) == ("answers_full", "own_answer")
    assert not Validation.objects.filter(example=question, validator=third).exists()  # nothing stored
    record_validation(example=leased(question, third), validator=third, label="correct")

    [validated] = validated_examples(task=question.round.task)

    assert validated.target == {"answers": ["green", "Green", "light green"]}
    assert validated.label_source == "annotator"


def test_a_flag_or_a_blank_answer_is_refused_with_the_field_named(question, validators):
    with pytest.raises(RuleError, match="flagged example takes no answer") as flagged:
        record_validation(example=leased(question, validators[0]), validator=validators[0], label="flagged",
                          metadata={"own_answer": "green", "flag_reason": "blurry"})
    assert flagged.value.field == "own_answer"
    with pytest.raises(RuleError, match="only punctuation") as blank:
        record_validation(example=leased(question, validators[0]), validator=validators[0], label="correct", metadata={"own_answer": "?!"})
    assert blank.value.field == "own_answer"


def test_a_kind_without_answer_lists_takes_no_answer_of_validators(sentiment_task, annotator, validator):
    example = make_example(sentiment_task, annotator)
    with pytest.raises(RuleError, match="takes no answers from validators") as refused:
        record_validation(example=leased(example, validator), validator=validator, label="correct", metadata={"own_answer": "positive"})
    assert refused.value.code == "own_answer_not_taken"


def test_the_review_page_asks_for_an_answer_and_stores_it(client, question, validators):
    client.force_login(validators[0])
    page = client.get(reverse("validation:queue", args=[question.round.task.code]))
    assert page.context["example"].pk == question.pk and b'name="own_answer"' in page.content

    response = client.post(reverse("validation:submit", args=[question.round.task.code, question.pk]),
                           {"label": "correct", "own_answer": "green"})

    assert response.status_code in (200, 302)
    assert Validation.objects.get(example=question, validator=validators[0]).metadata["own_answer"] == "green"
