"""try_model answers in the sandbox and stores nothing."""

import pytest

from annotation.models import Example
from annotation.sandbox import try_model
from annotation.tests.conftest import model_label, other_label
from dynabench.errors import RuleError
from tasks.models import Context


def test_it_answers_without_storing_anything(sentiment_task, sentiment_model):
    before = list(Context.objects.values_list("pk", "times_used"))
    answer = try_model(task=sentiment_task, input={"text": "Lovely staff."}, visitor="ip:127.0.0.1")
    assert answer.output["label"] in sentiment_task.labels
    assert answer.model == sentiment_model
    assert answer.model_wrong is None
    assert not Example.objects.exists()
    assert list(Context.objects.values_list("pk", "times_used")) == before


def test_it_says_whether_a_label_would_fool_the_model(sentiment_task, sentiment_model):
    label = model_label(sentiment_task, "Lovely staff.")
    fooled = try_model(task=sentiment_task, input={"text": "Lovely staff."}, target={"label": other_label(sentiment_task, label)}, visitor="ip:1")
    right = try_model(task=sentiment_task, input={"text": "Lovely staff."}, target={"label": label}, visitor="ip:1")
    assert (fooled.model_wrong, right.model_wrong) == (True, False)


def test_it_answers_qa_with_a_span_of_the_typed_passage(qa_task, qa_model):
    passage = "Ada Lovelace wrote the first algorithm in 1843."
    answer = try_model(task=qa_task, input={"question": "When?", "passage": passage}, visitor="ip:1")
    assert passage[answer.output["start"]:answer.output["end"]] == answer.output["answer"]


def test_it_refuses_a_missing_model_input(qa_task, qa_model):
    with pytest.raises(RuleError) as refused:
        try_model(task=qa_task, input={"question": "When?"}, visitor="ip:1")
    assert (refused.value.code, refused.value.field) == ("required", "passage")
