"""The console's Rounds page offers only what it can do and says why otherwise: while a round is
open it offers no "Open round N" button (opening would be refused) but says to close the open round
first, with a link; a task without any model says so and how to add one, instead of "every model is
in the loop"."""

import pytest

from tasks.models import MLModel, Round


@pytest.fixture
def no_model_task(sentiment_task):
    """Sentiment with round 1 open and no model record at all."""
    MLModel.objects.filter(task=sentiment_task).delete()
    sentiment_task.current_round().target_models.clear()
    return sentiment_task


def test_an_open_round_means_no_open_button_but_a_reason_and_a_link(client, owner, sentiment_task):
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/rounds/").content.decode()

    assert "Open round 2" not in page and "data-open-round " not in page
    later = page.split("data-open-round-later>")[1].split("</div>")[0]
    assert "Round 1 is still open" in later and "once round 1 is closed" in later and 'href="/tasks/sentiment/console/rounds/1/close"' in later


def test_the_open_button_is_back_once_no_round_is_open(client, owner, sentiment_task):
    Round.objects.filter(task=sentiment_task).update(status=Round.Status.CLOSED)
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/rounds/").content.decode()

    assert "Open round 2" in page and "data-open-round-later" not in page


def test_a_task_without_a_model_says_so_and_how_to_add_one(client, owner, no_model_task):
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/rounds/").content.decode()

    assert "is in the loop" not in page
    said = page.split("data-no-model>")[1].split("</p>")[0]
    assert "This task has no model yet" in said
    assert 'href="#add-endpoint"' in said and 'href="/tasks/sentiment/submit/"' in said
    assert 'id="add-endpoint"' in page
