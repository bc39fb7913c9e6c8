"""AI-generated candidates: a generator behind a real OpenAI-compatible server writes N candidates per
context; those that fool the model in the loop enter the review queue under the generator's account,
with origin "generated"; the review page and the validation API do not tell validators their origin;
a spent endpoint budget stops the run, keeping what it made."""

import json

import pytest

from annotation.generation import GENERATOR_USERNAME, run_generation, start_generation
from annotation.models import Example, GenerationRun
from tasks.models import MLModel

TEXT = "the room was dirty and the service slow"


@pytest.fixture
def generation(sentiment_task, tiny_classifier_dir, make_endpoint_model, owner, endpoint_server):
    round = sentiment_task.current_round()
    loop = MLModel.objects.create(task=sentiment_task, name="tiny-sentiment", kind=MLModel.Kind.HF_DIRECTORY,
                                  path=str(tiny_classifier_dir))
    round.target_models.add(loop)
    keep = round.contexts.order_by("pk").first()
    round.contexts.exclude(pk=keep.pk).update(active=False)
    generator = make_endpoint_model(sentiment_task, name="generator")
    # One text under each label: whatever the model answers, exactly two of the three fool it.
    endpoint_server.scripted = [json.dumps({"text": TEXT, "label": label}) for label in ("positive", "negative", "neutral")]
    return round, generator


def test_candidates_that_fool_the_model_enter_the_queue_as_generated(generation, owner, django_capture_on_commit_callbacks):
    round, generator = generation

    run = start_generation(round=round, model=generator, per_context=3, acting_user=owner)
    summary = run_generation(run.pk)

    run.refresh_from_db()
    assert (run.status, run.done, run.total, run.candidates, run.kept) == ("done", 3, 3, 3, 2), summary
    assert run.tokens > 0
    examples = list(Example.objects.filter(round=round))
    assert len(examples) == 2
    assert {e.origin for e in examples} == {"generated"} and {e.author.username for e in examples} == {GENERATOR_USERNAME}
    assert all(e.model_wrong and e.validation_state == "pending" for e in examples)


def test_validators_are_not_told_a_candidate_was_generated(generation, owner, validator, client):
    round, generator = generation
    run_generation(start_generation(round=round, model=generator, per_context=3, acting_user=owner).pk)
    client.force_login(validator)

    page = client.get(f"/tasks/{round.task.code}/validate/").content.decode()
    api = client.get(f"/api/v1/validations/next?task={round.task.code}").json()

    assert TEXT in page and TEXT in json.dumps(api)
    for said in ("generated", GENERATOR_USERNAME, "origin", "assistant"):
        assert said not in page.lower() and said not in json.dumps(api).lower()


def test_a_spent_budget_stops_the_run_and_keeps_what_it_made(generation, owner):
    round, generator = generation
    round.endpoint_call_budget = 2  # two of the generator's three calls (the model in the loop runs locally)
    round.save(update_fields=["endpoint_call_budget"])

    run = start_generation(round=round, model=generator, per_context=3, acting_user=owner)
    run_generation(run.pk)

    run.refresh_from_db()
    assert run.status == "stopped" and "budget" in run.reason
    assert (run.done, run.total) == (2, 3)
    assert Example.objects.filter(round=round).count() == run.kept


def test_only_owners_generate(generation, annotator):
    round, generator = generation
    from dynabench.errors import NotAllowed

    with pytest.raises(NotAllowed):
        start_generation(round=round, model=generator, per_context=1, acting_user=annotator)
    assert not GenerationRun.objects.exists()
