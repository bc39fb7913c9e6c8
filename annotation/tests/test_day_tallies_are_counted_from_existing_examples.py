"""Migration 0009 counts the examples already stored into ``AuthorDayTally`` rows: per author,
task and day in ``settings.TIME_ZONE``, retracted examples included."""

import importlib
from datetime import timedelta

from django.apps import apps
from django.utils import timezone

from annotation.limits import daily_allowance
from annotation.models import AuthorDayTally, Example
from annotation.services import create_example

migration = importlib.import_module("annotation.migrations.0009_author_day_tally")


def test_existing_examples_are_counted_per_author_task_and_day(annotator, owner, sentiment_task, sentiment_context):
    sentiment_task.config = {**sentiment_task.config, "daily_example_cap": 10}
    sentiment_task.save()
    for n in range(3):
        create_example(user=annotator, context=sentiment_context, input={"text": f"mine {n}"}, target={"label": "neutral"})
    create_example(user=owner, context=sentiment_context, input={"text": "theirs"}, target={"label": "neutral"})
    first = Example.objects.filter(author=annotator).order_by("pk").first()
    Example.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=1), retracted=True)
    AuthorDayTally.objects.all().delete()

    migration.count_written_days(apps, None)

    today, yesterday = timezone.localdate(), timezone.localdate() - timedelta(days=1)
    assert set(AuthorDayTally.objects.values_list("author_id", "task_id", "day", "written")) == {
        (annotator.pk, sentiment_task.pk, today, 2),
        (annotator.pk, sentiment_task.pk, yesterday, 1),
        (owner.pk, sentiment_task.pk, today, 1),
    }
    assert daily_allowance(user=annotator, task=sentiment_task).written == 2
