"""When an endpoint model's server refuses a request as misconfigured (a 4xx other than 408/429), the
``endpoint_misconfigured`` signal queues a job that tells the task's owners, with the server's reason and
a link to the model's connection page: once per version of the settings, however often annotators hit it."""

from community.jobs import notify_endpoint_misconfigured
from community.models import Notification
from dynabench.errors import RuleError
from tasks.loop import gate
from tasks.loop.registry import get_predictor
from tasks.models import Purpose
from tests.api.conftest import run_worker

import pytest

REASON = "Server is pinned to 'tiny-gpt2'; requested 'tiny'"


def test_the_owners_hear_once_with_the_servers_reason(owner, sentiment_task, make_endpoint_model, endpoint_server, default_queue,
                                                      django_capture_on_commit_callbacks):
    model = make_endpoint_model(sentiment_task, name="pinned-endpoint", model_name="tiny", max_retries=0)
    endpoint_server.pinned = True

    for text in ("one", "two", "three"):
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuleError), gate.admit(model, Purpose.LOOP):
            get_predictor(model).predict([{"text": text}])
    assert default_queue.count == 1  # one job, not one per refused call
    run_worker()
    notify_endpoint_misconfigured(model.pk, REASON)  # a second run of the job changes nothing

    note = Notification.objects.get(user=owner)
    assert note.kind == "endpoint_misconfigured" and REASON in note.message and "pinned-endpoint" in note.message
    assert note.url == f"/tasks/{sentiment_task.code}/console/endpoints/{model.pk}/"
