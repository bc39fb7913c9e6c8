"""A transfer rate counts only the models that answer the task, the leaderboard's published models:
never the round's writing assistant or a generator of its candidates (they helped write the examples,
and a language model asked for a label answers with prose), nor an unpublished model, nor the model
the example was written against. The owner's dashboard names the models counted and why others are not."""

import pytest

from annotation.models import GenerationRun, Origin, RoundAssistant, TransferRate, TransferResult
from tasks.models import MLModel
from validation.jobs import measure_transfer
from validation.services import record_validation
from validation.tests.conftest import make_example


@pytest.fixture
def models(sentiment_task, tiny_classifier_dir, owner):
    def make(name, published=True):
        return MLModel.objects.create(task=sentiment_task, name=name, path=str(tiny_classifier_dir), published=published,
                                      status=MLModel.Status.EVALUATED)

    round = sentiment_task.current_round()
    made = {name: make(name) for name in ("loop", "other", "assistant", "generator")}
    made["draft"] = make("draft", published=False)
    RoundAssistant.objects.create(round=round, model=made["assistant"], enabled=True)
    GenerationRun.objects.create(round=round, model=made["generator"], requested_by=owner, status=GenerationRun.Status.DONE)
    return made


@pytest.fixture
def validated(sentiment_task, annotator, owner, models):
    examples = [make_example(sentiment_task, annotator, model=models["loop"], origin=Origin.ASSISTED) for _ in range(3)]
    for example in examples:
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    return examples


def test_it_puts_the_examples_to_the_published_models_that_did_not_help(sentiment_task, models, validated):
    summary = measure_transfer(sentiment_task.current_round().pk)

    assert "3 validated examples, 3 answers run, 3 rated" in summary
    assert set(TransferResult.objects.values_list("model__name", flat=True)) == {"other"}
    assert set(TransferRate.objects.values_list("tried", flat=True)) == {1}


def test_answers_stored_from_a_helper_no_longer_count(sentiment_task, models, validated):
    for example in validated:  # as an earlier measurement stored them: the assistant answered in prose
        TransferResult.objects.create(example=example, model=models["assistant"], output={"label": None}, target=example.target,
                                      fooled=True)

    measure_transfer(sentiment_task.current_round().pk)

    assert set(TransferRate.objects.values_list("tried", flat=True)) == {1}


def test_the_dashboard_names_the_models_counted_and_why_others_are_not(sentiment_task, models, validated, owner, client):
    measure_transfer(sentiment_task.current_round().pk)
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/rounds/1/dashboard").content.decode()

    assert "Models counted: <strong>loop</strong>, <strong>other</strong> (each example leaves out the model it was written against)." in page
    assert "Not counted: <strong>assistant</strong>, the round&#x27;s writing assistant." in page
    assert "Not counted: <strong>generator</strong>, generated candidates in this round." in page
    assert "Not counted: <strong>draft</strong>, not published" in page
    assert '<td data-label="Model">assistant</td>' not in page
