"""A researcher's predictions are scored by the worker; the ``model_evaluation_finished`` signal queues a
job that notifies the owner in the app and by email, once however often it runs; a failed evaluation
says why."""

import io
import json

from django.core import mail

from community.jobs import notify_model_finished
from community.models import Notification
from leaderboard.services import submit_predictions
from tasks.models import MLModel
from tests.api.conftest import run_worker


def test_the_owner_hears_once_that_the_model_is_evaluated(researcher, sentiment_datasets, django_capture_on_commit_callbacks):
    researcher.email = "rita@example.org"
    researcher.save()
    rows = [{"uid": f"{n}-{i}", "label": "neutral"} for n in ("sent-r1-dev", "sent-r1-test") for i in range(3)]
    upload = io.BytesIO("".join(json.dumps(r) + "\n" for r in rows).encode())
    with django_capture_on_commit_callbacks(execute=True):
        model = submit_predictions(user=researcher, task=sentiment_datasets["scoring"].task, upload=upload, name="neutral-only")

    with django_capture_on_commit_callbacks(execute=True):
        run_worker()  # scores the model; its status commit sends the signal, whose receiver queues the job
    run_worker()  # the notification job
    notify_model_finished(model.pk, "evaluated")  # a second run of the job changes nothing

    model.refresh_from_db()
    assert model.status == "evaluated"
    note = Notification.objects.get(user=researcher)
    assert note.kind == "model_evaluated" and "neutral-only" in note.message and note.url == f"/models/{model.pk}/"
    assert note.emailed_at is not None
    assert [m.to for m in mail.outbox] == [["rita@example.org"]]
    assert "neutral-only" in mail.outbox[0].body


def test_a_failed_evaluation_is_reported_with_its_reason(researcher, sentiment_task):
    model = MLModel.objects.create(task=sentiment_task, owner=researcher, name="broken", status=MLModel.Status.FAILED)

    notify_model_finished(model.pk, "failed", "sent-r1-dev: the weights file is damaged")

    note = Notification.objects.get(user=researcher)
    assert note.kind == "model_failed" and "the weights file is damaged" in note.message
    assert mail.outbox == []  # no address: in-app only
