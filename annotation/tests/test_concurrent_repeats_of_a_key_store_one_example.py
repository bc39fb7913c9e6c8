"""Concurrent requests with one submission key store one example and all answer with it: the
second waits for the first's day row, its insert breaks the key's unique constraint, and its
transaction (day count, context use, tallies) is rolled back (``annotation.saving._save_example``)."""

import pytest
from django.db import connection

from annotation.models import AuthorDayTally, AuthorTally, Example
from annotation.services import create_example
from annotation.tests.helpers import at_once

KEY = "5b0c9d8e7f6a4b3c2d1e0f9a8b7c6d5e"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a row lock; SQLite lets one writing transaction run at a time")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("daily_cap", [None, 1], ids=["no cap", "the example uses the last of the day's cap"])
def test_four_concurrent_repeats_of_one_key_store_one_example(annotator, sentiment_task, sentiment_context, daily_cap):
    if daily_cap:
        sentiment_task.config = {**sentiment_task.config, "daily_example_cap": daily_cap}
        sentiment_task.save()
    answers, errors = [], []

    def submit(n):
        try:
            example = create_example(
                user=annotator, context=sentiment_context, input={"text": f"repeat {n}"}, target={"label": "neutral"},
                submission_key=KEY,
            )
            answers.append((example.pk, example.replayed))
        except Exception as error:  # noqa: BLE001 - any error fails the test below, with its repr
            errors.append(repr(error))

    at_once(submit, 4)

    assert errors == []
    stored = Example.objects.get(author=annotator)
    assert sorted(answers) == sorted([(stored.pk, False)] + [(stored.pk, True)] * 3)
    sentiment_context.refresh_from_db()
    assert sentiment_context.times_used == 1
    assert AuthorDayTally.objects.get(author=annotator, task=sentiment_task).written == 1
    assert AuthorTally.objects.get(author=annotator, round=stored.round).collected == 1
