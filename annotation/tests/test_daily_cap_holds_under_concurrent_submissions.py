"""One annotator's concurrent submissions are counted one at a time against the daily cap: the
upsert on the author's ``AuthorDayTally`` row makes the second wait for the first to commit."""

import pytest
from django.db import connection

from annotation.models import AuthorDayTally, Example
from annotation.services import create_example
from annotation.tests.helpers import at_once
from dynabench.errors import RateLimited


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a row lock; SQLite lets one writing transaction run at a time")
@pytest.mark.django_db(transaction=True)
def test_six_concurrent_submissions_against_a_cap_of_three_store_three(annotator, sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 3}
    sentiment_task.save()
    outcomes = []

    def submit(n):
        try:
            create_example(user=annotator, context=sentiment_context, input={"text": f"concurrent {n}"}, target={"label": "neutral"})
            outcomes.append("stored")
        except RateLimited as refused:
            outcomes.append(refused.code)

    at_once(submit, 6)

    assert sorted(outcomes) == ["daily_cap_reached"] * 3 + ["stored"] * 3
    assert Example.objects.filter(author=annotator).count() == 3
    assert AuthorDayTally.objects.get(author=annotator, task=sentiment_task).written == 3  # refusals rolled back
