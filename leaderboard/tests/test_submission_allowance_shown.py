"""The researcher sees how much of the daily submission limit remains (scored on the hidden sets
too): on the submission page and from ``GET /api/v1/models/allowance``, counting every
submission of the last 24 hours."""

from datetime import timedelta

from django.utils import timezone

from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import SENTIMENT_ITEMS, predictions_jsonl
from tests.api.conftest import client_for
from tasks.models import MLModel

UPLOAD = predictions_jsonl([{"uid": uid, "label": label} for uid, _, label, _ in SENTIMENT_ITEMS])


def test_the_page_shows_what_remains(client, researcher, sentiment_task, sentiment_dataset, media_root, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 3
    submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="first")
    client.force_login(researcher)

    html = client.get("/tasks/sentiment/submit/").content.decode()

    assert "<strong>2 of 3</strong> submissions left" in html


def test_the_page_says_when_the_next_one_frees_up(client, researcher, sentiment_task, sentiment_dataset, media_root, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 1
    model = submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="only")
    client.force_login(researcher)

    html = client.get("/tasks/sentiment/submit/").content.decode()

    assert "<strong>0 of 1</strong> submissions left" in html
    assert f"frees up at {model.created_at + timedelta(days=1):%Y-%m-%d %H:%M} UTC" in html


def test_the_api_gives_limit_used_remaining_and_next_time(researcher, sentiment_task, sentiment_dataset, media_root, settings):
    settings.MODEL_SUBMISSIONS_PER_DAY = 3
    old = submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="yesterday")
    MLModel.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    fresh = submit_predictions(user=researcher, task=sentiment_task, upload=UPLOAD, name="today")

    body = client_for(researcher).get("/api/v1/models/allowance").json()

    assert {k: body[k] for k in ("researcher", "limit", "used", "remaining")} == {"researcher": True, "limit": 3, "used": 1, "remaining": 2}
    assert body["next_at"].startswith(f"{fresh.created_at + timedelta(days=1):%Y-%m-%dT%H:%M}")


def test_admins_are_not_limited_and_anonymous_users_must_log_in(admin_user, db):
    body = client_for(admin_user).get("/api/v1/models/allowance").json()

    assert (body["limit"], body["remaining"]) == (None, None)
    assert client_for(None).get("/api/v1/models/allowance").status_code == 401
