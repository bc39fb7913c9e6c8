"""While the model in the loop trains, the write page says so with its progress (and waits), the
task pages show "model in training", and every surface refuses examples with a 409 naming why."""

import pytest
from django.urls import reverse

from annotation.loop_choice import model_in_loop
from annotation.models import Example
from annotation.services import create_example
from dynabench.errors import RuleError
from tasks.models import MLModel
from tests.api.conftest import client_for


@pytest.fixture
def training(sentiment_model):
    """The sentiment model in the loop, back in training at 42 %."""
    MLModel.objects.filter(pk=sentiment_model.pk).update(status=MLModel.Status.TRAINING, progress=0.42)
    sentiment_model.refresh_from_db()
    return sentiment_model


def test_the_write_page_says_the_model_is_training_with_its_progress_and_reloads(client, annotator, sentiment_task, training):
    client.force_login(annotator)

    response = client.get(reverse("annotation:create", args=[sentiment_task.code]))

    page = response.content.decode()
    assert response.status_code == 409
    assert "The model in the loop (tiny-sentiment) is still training (42% done)" in page
    assert "Writing opens by itself as soon as it is ready" in page
    assert '<progress max="1" value="0.42">' in page and 'http-equiv="refresh"' in page
    assert 'name="text"' not in page  # no form to write into


def test_a_model_waiting_for_a_worker_says_so(client, annotator, sentiment_task, training):
    MLModel.objects.filter(pk=training.pk).update(progress=0.0)
    client.force_login(annotator)

    page = client.get(reverse("annotation:create", args=[sentiment_task.code])).content.decode()

    assert "is still training (waiting for a worker to start it)" in page


def test_the_write_page_opens_once_the_model_is_ready(client, annotator, sentiment_task, training):
    MLModel.objects.filter(pk=training.pk).update(status=MLModel.Status.UPLOADED, progress=1.0)
    client.force_login(annotator)

    response = client.get(reverse("annotation:create", args=[sentiment_task.code]))

    assert response.status_code == 200 and 'http-equiv="refresh"' not in response.content.decode()


def test_the_task_pages_show_model_in_training(client, sentiment_task, training):
    detail = client.get(reverse("annotation:task_detail", args=[sentiment_task.code])).content.decode()
    home = client.get("/").content.decode()

    for page in (detail, home):
        assert 'data-model="tiny-sentiment"' in page and "model in training" in page and "42%" in page


def test_the_service_and_the_api_refuse_examples_with_409(annotator, sentiment_task, training):
    context = sentiment_task.current_round().contexts.first()
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=context, input={"text": "fine"}, target={"label": "neutral"})
    assert (refused.value.code, refused.value.status_code) == ("model_in_training", 409)
    assert not Example.objects.exists()

    response = client_for(annotator).get(f"/api/v1/tasks/{sentiment_task.code}/context")

    assert response.status_code == 409 and response.json()["code"] == "model_in_training"


def test_a_model_whose_first_training_failed_is_not_used(sentiment_task, training):
    MLModel.objects.filter(pk=training.pk).update(status=MLModel.Status.FAILED, failure_reason="out of memory", checksum="")

    with pytest.raises(RuleError) as refused:
        model_in_loop(sentiment_task.current_round())

    assert "failed to train" in refused.value.message and "out of memory" in refused.value.message
