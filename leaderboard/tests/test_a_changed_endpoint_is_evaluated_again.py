"""When an endpoint's settings change what decides its answers (here its model name), the model's checksum
is new and the leaderboard queues its runs again: the old scores stay readable in the run's history with
the checksum they were computed with, and the new run records the new checksum. A change that decides no
answer (the timeout) queues nothing."""

import pytest

from leaderboard.models import EvaluationRun
from leaderboard.tests.conftest import evaluate_now
from tasks.loop.endpoints.records import update_endpoint


@pytest.mark.django_db
def test_a_new_model_name_is_evaluated_again_and_the_old_scores_keep_their_checksum(
    sentiment_task, sentiment_dataset, endpoint_server, make_endpoint_model, owner, django_capture_on_commit_callbacks,
):
    model = make_endpoint_model(sentiment_task, owner=owner)
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done" and run.model_checksum == model.checksum
    old_checksum, old_performance = model.checksum, run.performance

    with django_capture_on_commit_callbacks(execute=False):
        model = update_endpoint(model=model, acting_user=owner, model_name="tiny-gpt2-renamed")

    run.refresh_from_db()
    assert model.checksum != old_checksum and run.status == "queued"
    assert run.history[-1]["model_checksum"] == old_checksum and run.history[-1]["performance"] == old_performance
    evaluate_now(model)
    run.refresh_from_db()
    assert run.status == "done" and run.model_checksum == model.checksum
    assert endpoint_server.requests[-1]["body"]["model"] == "tiny-gpt2-renamed"


@pytest.mark.django_db
def test_a_new_timeout_queues_nothing(sentiment_task, sentiment_dataset, endpoint_server, make_endpoint_model, owner):
    model = make_endpoint_model(sentiment_task, owner=owner)
    evaluate_now(model)

    update_endpoint(model=model, acting_user=owner, timeout_s=7)

    assert EvaluationRun.objects.get(model=model).status == "done"
