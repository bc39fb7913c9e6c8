"""Submissions are limited per annotator per minute (settings.ANNOTATION_SUBMISSIONS_PER_MINUTE)."""

import pytest

from annotation.limits import check_submission_rate
from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RateLimited


def test_it_refuses_the_submission_over_the_rate(annotator, sentiment_context, settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 2
    for n in range(2):
        create_example(user=annotator, context=sentiment_context, input={"text": f"t{n}"}, target={"label": "neutral"})
    with pytest.raises(RateLimited) as refused:
        create_example(user=annotator, context=sentiment_context, input={"text": "t3"}, target={"label": "neutral"})
    assert refused.value.code == "rate_limited"
    assert "at most 2 a minute" in refused.value.message
    assert Example.objects.count() == 2


def test_it_counts_each_key_separately(settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1
    check_submission_rate(key="user:1")
    check_submission_rate(key="user:2")
    with pytest.raises(RateLimited):
        check_submission_rate(key="user:1")


def test_it_does_not_count_submissions_refused_for_their_input(annotator, sentiment_context, settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 1
    with pytest.raises(Exception):
        create_example(user=annotator, context=sentiment_context, input={"text": ""}, target={"label": "neutral"})
    assert create_example(user=annotator, context=sentiment_context, input={"text": "ok"}, target={"label": "neutral"}).pk
