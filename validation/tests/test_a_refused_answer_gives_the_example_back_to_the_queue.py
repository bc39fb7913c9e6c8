"""A validator whose own answer is refused because the question holds all its answers (the eleventh of
ten) does not keep the example leased: the next validator gets it from the queue and their verdict
counts. The review page no longer asks for an answer once the answers are full."""

import pytest
from django.urls import reverse

from annotation.models import Example
from dynabench.errors import RuleError
from tasks.models import Context
from tests.vqa_support import vqa_task
from validation.models import Validation
from validation.queue import next_example_for
from validation.services import record_validation
from validation.tests.conftest import leased


@pytest.fixture
def question(owner, annotator):
    task = vqa_task(owner)
    task.config = {**task.config, "validations_needed": 3, "vqa_answers": 2}
    task.save()
    round = task.current_round()
    context = Context.objects.create(round=round, uid="a" * 64, data={"image": "a" * 64})
    return Example.objects.create(round=round, context=context, author=annotator, input={"image": "a" * 64, "question": "what colour"},
                                  target={"answers": ["green"]}, model_output={"answer": "red", "score": 0.4}, model_wrong=True)


def test_the_next_validator_gets_the_example_and_their_verdict_counts(question, validators):
    first, refused, next_one = validators
    record_validation(example=leased(question, first), validator=first, label="correct", metadata={"own_answer": "lime"})
    assert next_example_for(validator=refused, round=question.round) == question

    with pytest.raises(RuleError) as refusal:
        record_validation(example=question, validator=refused, label="correct", metadata={"own_answer": "green"})

    assert refusal.value.code == "answers_full" and refusal.value.status_code == 400
    assert Example.objects.get(pk=question.pk).leased_to is None
    assert next_example_for(validator=next_one, round=question.round) == question
    record_validation(example=question, validator=next_one, label="correct")
    assert Validation.objects.get(example=question, validator=next_one).counts


def test_the_page_asks_for_no_answer_once_they_are_full_and_shows_the_example_again(client, question, validators):
    first, second, _ = validators
    record_validation(example=leased(question, first), validator=first, label="correct", metadata={"own_answer": "lime"})
    client.force_login(second)
    page = client.get(reverse("validation:queue", args=[question.round.task.code]))
    assert page.context["example"].pk == question.pk and b'name="own_answer"' not in page.content

    answered = client.post(reverse("validation:submit", args=[question.round.task.code, question.pk]),
                           {"label": "correct", "own_answer": "green"})

    assert answered.status_code == 400 and "already has its 2 answers" in answered.content.decode()
    assert answered.context["example"].pk == question.pk and b'name="own_answer"' not in answered.content
    assert Example.objects.get(pk=question.pk).leased_to_id == second.pk  # leased again, by the queue, to the one looking at it
