"""Each annotator writes at most the task's daily_example_cap examples per task per day."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AuthorDayTally, Example
from annotation.services import create_example
from dynabench.errors import RateLimited


@pytest.fixture
def cap_of_two(sentiment_task):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 2}
    sentiment_task.save()
    return sentiment_task


def write(user, context, n):
    return create_example(user=user, context=context, input={"text": f"example {n}"}, target={"label": "neutral"})


def test_it_refuses_the_example_over_the_daily_cap(annotator, cap_of_two, sentiment_context):
    write(annotator, sentiment_context, 1)
    write(annotator, sentiment_context, 2)
    with pytest.raises(RateLimited) as refused:
        write(annotator, sentiment_context, 3)
    assert refused.value.code == "daily_cap_reached"
    assert refused.value.status_code == 429
    assert "daily limit is 2" in refused.value.message
    assert Example.objects.filter(author=annotator).count() == 2


def test_it_counts_retracted_examples_against_the_cap(annotator, cap_of_two, sentiment_context):
    write(annotator, sentiment_context, 1)
    write(annotator, sentiment_context, 2)
    Example.objects.update(retracted=True)
    with pytest.raises(RateLimited):
        write(annotator, sentiment_context, 3)


def test_it_counts_only_today(annotator, cap_of_two, sentiment_context):
    write(annotator, sentiment_context, 1)
    write(annotator, sentiment_context, 2)
    Example.objects.update(created_at=timezone.now() - timedelta(days=1))
    AuthorDayTally.objects.update(day=timezone.localdate() - timedelta(days=1))
    assert write(annotator, sentiment_context, 3).pk


def test_it_counts_each_annotator_separately(annotator, owner, cap_of_two, sentiment_context):
    write(annotator, sentiment_context, 1)
    write(annotator, sentiment_context, 2)
    assert write(owner, sentiment_context, 3).pk
