"""The model's status fragment polls while its evaluation can still change, and stops once it is final
(issue 19, finding 7: it polled every 2 s forever)."""

from leaderboard.models import EvaluationRun
from tasks.models import MLModel

POLL = 'hx-trigger="every 2s"'


def fragment(client, model):
    response = client.get(f"/models/{model.pk}/status/")
    assert response.status_code == 200
    return response.content.decode()


def test_it_polls_while_a_run_is_running_and_stops_when_every_run_ended(client, submitted_model):
    submitted_model.published = True
    submitted_model.save(update_fields=["published"])
    run = EvaluationRun.objects.get(model=submitted_model)
    EvaluationRun.objects.filter(pk=run.pk).update(status="running", progress=0.5)
    assert POLL in fragment(client, submitted_model)
    EvaluationRun.objects.filter(pk=run.pk).update(status="failed", error="The worker stopped responding. Gave up after 3 attempts.")
    MLModel.objects.filter(pk=submitted_model.pk).update(status="failed")
    assert POLL not in fragment(client, submitted_model)


def test_a_model_without_runs_polls_only_while_unpacking_training_or_queued(client, submitted_model):
    EvaluationRun.objects.filter(model=submitted_model).delete()
    MLModel.objects.filter(pk=submitted_model.pk).update(published=True, status="unpacking")
    html = fragment(client, submitted_model)
    assert POLL in html and "Unpacking the archive…" in html
    MLModel.objects.filter(pk=submitted_model.pk).update(status="training")
    assert POLL in fragment(client, submitted_model)
    MLModel.objects.filter(pk=submitted_model.pk).update(status="uploaded")
    assert POLL not in fragment(client, submitted_model)
