"""Fixtures of the cross-app browser tests: role groups, fresh cache counters, a populated site."""

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def role_groups(db):
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def whole_round(settings, tmp_path):
    """For a test that walks a whole round in the browser: media in the test's own folder, no limit
    on examples per minute, a fresh cache."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def site(sentiment_task, tiny_classifier_dir, annotator, validator, owner, researcher, settings, tmp_path):
    """Sentiment with a model in the loop, examples by the annotator (one validated), and a
    leaderboard of two prediction-file models on one scoring dataset per round: enough for
    every page to show real content. Returns ``{"task", "model"}`` (a ranked model)."""
    from annotation.tests.conftest import put_in_loop
    from leaderboard.jobs import recompute_leaderboard
    from leaderboard.services import submit_predictions
    from leaderboard.tests.conftest import SENTIMENT_ITEMS, answers, evaluate_now, make_dataset, predictions_jsonl
    from validation.tests.conftest import make_example

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct", validation_count=3, correct_count=3)
    make_example(sentiment_task, annotator, model_wrong=True)
    make_example(sentiment_task, annotator, model_wrong=False)
    make_example(sentiment_task, owner, model_wrong=True)
    items = [(uid, {"text": text}, {"label": label}, tag) for uid, text, label, tag in SENTIMENT_ITEMS]
    make_dataset(sentiment_task, "sentiment-r1-dev", items)
    models = [
        submit_predictions(user=researcher, task=sentiment_task, upload=predictions_jsonl(answers(correct)), name=name)
        for name, correct in (("roberta-predictions", 5), ("bert-predictions", 3))
    ]
    for model in models:
        evaluate_now(model)
    recompute_leaderboard(sentiment_task.pk)
    return {"task": sentiment_task, "model": models[0]}


PAGES = [
    # (name, path, who is logged in)
    ("home", "/", "annotator"),
    ("task", "/tasks/sentiment/", "annotator"),
    ("create", "/tasks/sentiment/write/", "annotator"),
    ("validation", "/tasks/sentiment/validate/", "validator"),
    ("my-examples", "/my/examples/", "annotator"),
    ("round", "/tasks/sentiment/rounds/1/", "owner"),
    ("leaderboard", "/tasks/sentiment/leaderboard/", "researcher"),
    ("model", "/models/{model}/", "researcher"),
    ("sign-up", "/accounts/signup/", None),
    ("notifications", "/notifications/", "annotator"),
    ("notification-preferences", "/notifications/preferences/", "annotator"),
]
"""The pages issue 17 names, each as the person who uses it sees it."""
