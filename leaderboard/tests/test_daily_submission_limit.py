"""A user may submit at most MODEL_SUBMISSIONS_PER_DAY models in 24 hours; admins are exempt."""

from datetime import timedelta

import pytest
from django.utils import timezone

from dynabench.errors import RateLimited
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, predictions_jsonl
from tasks.models import MLModel

UPLOAD = predictions_jsonl([{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS])


def test_it_refuses_the_submission_over_the_daily_limit(researcher, sentiment_task, sentiment_dataset, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 2
    for i in range(2):
        submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name=f"m{i}")
    with pytest.raises(RateLimited) as info:
        submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="one too many")
    assert info.value.status_code == 429 and info.value.code == "daily_limit"
    assert "daily limit is 2" in info.value.message
    assert MLModel.objects.filter(owner=researcher).count() == 2


def test_submissions_older_than_a_day_do_not_count(researcher, sentiment_task, sentiment_dataset, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 1
    old = submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="yesterday")
    MLModel.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="today")
    assert MLModel.objects.filter(owner=researcher).count() == 2


def test_admins_are_not_limited(admin_user, sentiment_task, sentiment_dataset, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 0
    submit_predictions(user=admin_user, task=sentiment_task, upload=UPLOAD, name="admin")
    assert MLModel.objects.filter(owner=admin_user).count() == 1
