"""A running generation's progress counts a request as answered as soon as the generator answers, so it
never reads "0 of 3 requests answered · 1 candidate": whenever a candidate is read (and put to the model
in the loop), the requests answered are at least the candidates."""

import json

import pytest

from annotation import generation as generation_module
from annotation.generation import run_generation, start_generation
from annotation.models import GenerationRun
from tasks.models import MLModel


@pytest.fixture
def run(sentiment_task, tiny_classifier_dir, make_endpoint_model, owner, endpoint_server):
    round = sentiment_task.current_round()
    round.target_models.add(MLModel.objects.create(task=sentiment_task, name="tiny-sentiment", path=str(tiny_classifier_dir)))
    keep = round.contexts.order_by("pk").first()
    round.contexts.exclude(pk=keep.pk).update(active=False)
    endpoint_server.scripted = [json.dumps({"text": "the service was slow", "label": label}) for label in ("positive", "negative", "neutral")]
    return start_generation(round=round, model=make_endpoint_model(sentiment_task, name="generator"), per_context=3, acting_user=owner)


def test_the_requests_answered_are_never_fewer_than_the_candidates(run, monkeypatch):
    seen = []
    ask_model = generation_module.model_answer.ask_model

    def watching(*args, **kwargs):  # the loop's model is asked once a candidate was counted
        seen.append(GenerationRun.objects.values_list("done", "candidates").get(pk=run.pk))
        return ask_model(*args, **kwargs)

    monkeypatch.setattr(generation_module.model_answer, "ask_model", watching)

    run_generation(run.pk)

    assert len(seen) == 3 and all(done >= candidates for done, candidates in seen), seen
    assert GenerationRun.objects.values_list("done", "candidates").get(pk=run.pk) == (3, 3)
