"""Fixtures of the annotation tests: tiny models in the loop of round 1, fresh rate-limit counters."""

import pytest
from django.core.cache import cache

from tasks.models import MLModel


@pytest.fixture(autouse=True)
def role_groups(db):
    """The role groups, before the root conftest's users join them.

    ``migrate`` is meant to create them (``dynabench.apps``), but its ``post_migrate`` hook
    is connected to an app without models, which Django never signals.
    """
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    """Rate-limit counters live in the cache (Redis), which outlives a test's database."""
    cache.clear()
    yield
    cache.clear()


def put_in_loop(task, path, name) -> MLModel:
    model = MLModel.objects.create(task=task, name=name, kind=MLModel.Kind.HF_DIRECTORY, path=str(path))
    task.current_round().target_models.add(model)
    return model


@pytest.fixture
def sentiment_model(sentiment_task, tiny_classifier_dir):
    """A tiny sentiment classifier, the model in the loop of the sentiment task's round 1."""
    return put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")


@pytest.fixture
def qa_model(qa_task, tiny_qa_dir):
    """A tiny extractive-QA model, the model in the loop of the QA task's round 1."""
    return put_in_loop(qa_task, tiny_qa_dir, "tiny-qa")


@pytest.fixture
def nli_model(nli_task, tiny_nli_dir):
    return put_in_loop(nli_task, tiny_nli_dir, "tiny-nli")


@pytest.fixture
def sentiment_context(sentiment_task, sentiment_model):
    """A sentiment context whose round has a model in the loop."""
    return sentiment_task.current_round().contexts.order_by("pk").first()


@pytest.fixture
def qa_context(qa_task, qa_model):
    return qa_task.current_round().contexts.order_by("pk").first()


def model_answer(task, inputs: dict) -> dict:
    """What the model in the loop of ``task``'s current round answers for ``inputs``."""
    from annotation.loop_choice import model_in_loop
    from tasks.loop.registry import get_predictor

    return get_predictor(model_in_loop(task.current_round())).predict([inputs])[0]


def model_label(task, text: str) -> str:
    """The label the model in the loop gives ``text`` (for a one-text task such as sentiment)."""
    return model_answer(task, {"text": text})["label"]


def other_label(task, label: str) -> str:
    return next(candidate for candidate in task.labels if candidate != label)


@pytest.fixture
def tiny_sentence_encoder(tiny_classifier_dir, settings):
    """The tiny random-weight BERT as the sentence encoder (``annotation/diversity/encoder.py``), with
    every per-task index of this process forgotten before and after (ids are reused after a rollback)."""
    from annotation.diversity import index

    settings.DYNABENCH_EMBEDDING_ENCODER = {"path": str(tiny_classifier_dir), "name": "tiny-bert"}
    index.forget_indexes()
    yield
    index.forget_indexes()
