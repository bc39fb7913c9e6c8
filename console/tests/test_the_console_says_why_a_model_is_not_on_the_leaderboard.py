"""One publication rule for every kind of model: an endpoint added on the console starts published, as
an uploaded archive or a registered directory does (``MLModel.PUBLISHED_BY_DEFAULT``); the rounds page
lists every model of the task with its place on the leaderboard or why it is not there (not
published, failed, still evaluating, ...)."""

import pytest

from leaderboard.services import register_model_directory
from leaderboard.tests.conftest import ranked_sentiment, sentiment_dataset, sentiment_datasets  # noqa: F401
from tasks.models import MLModel


@pytest.fixture
def models(ranked_sentiment, sentiment_task, researcher):
    MLModel.objects.create(task=sentiment_task, owner=researcher, name="kept-back", path="/nowhere", published=False,
                           status=MLModel.Status.EVALUATED)
    MLModel.objects.create(task=sentiment_task, owner=researcher, name="broken", path="/nowhere", published=True,
                           status=MLModel.Status.FAILED, failure_reason="config.json is missing")
    MLModel.objects.create(task=sentiment_task, owner=researcher, name="busy", path="/nowhere", published=True,
                           status=MLModel.Status.EVALUATING)
    return ranked_sentiment


def _row(page, name):
    return page.split(f">{name}</a>")[1].split("</tr>")[0]


def test_the_rounds_page_says_where_each_model_stands(client, owner, sentiment_task, models):
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/rounds/").content.decode()

    assert "data-board-standings" in page
    assert "listed</span> rank 1" in _row(page, "beta")
    assert "not published: on no public board (leaderboard, arena)" in _row(page, "kept-back")
    assert "failed: config.json is missing" in _row(page, "broken")
    assert "not evaluated yet (evaluating)" in _row(page, "busy")


def test_an_endpoint_added_on_the_console_starts_published_as_an_upload_does(client, owner, sentiment_task, endpoint_server,
                                                                              tiny_classifier_dir):
    client.force_login(owner)
    form = client.get(f"/tasks/{sentiment_task.code}/console/rounds/").content.decode()
    box = form.split('name="published"')[1].split(">")[0] + form.split('name="published"')[0].rsplit("<input", 1)[1]

    registered = register_model_directory(actor=owner, task=sentiment_task, path=tiny_classifier_dir, name="registered")

    assert "checked" in box
    assert registered.published is True
