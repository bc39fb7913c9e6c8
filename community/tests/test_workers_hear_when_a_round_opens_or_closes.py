"""When a round closes, those who wrote or validated its examples are notified; when the next one opens,
those who worked on the task are; nobody else, and through a job."""

from annotation.models import Example
from community.models import Notification
from tasks.models import MLModel
from tasks.services import open_round, set_round_status
from tests.api.conftest import run_worker


def test_round_close_and_open_reach_the_tasks_workers(sentiment_task, annotator, owner, outsider, django_capture_on_commit_callbacks):
    round1 = sentiment_task.rounds.get(number=1)
    Example.objects.create(round=round1, context=round1.contexts.first(), author=annotator, input={"text": "Cold soup."},
                           target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True)

    model = MLModel.objects.create(task=sentiment_task, name="in-the-loop", kind=MLModel.Kind.HF_DIRECTORY, path="unused")
    with django_capture_on_commit_callbacks(execute=True):
        set_round_status(round=round1, status="closed", acting_user=owner)
    run_worker()
    with django_capture_on_commit_callbacks(execute=True):
        round2 = open_round(task=sentiment_task, acting_user=owner, target_model_ids=[model.pk])
    run_worker()

    notes = list(Notification.objects.order_by("pk").values_list("user__username", "kind", "url"))
    assert notes == [
        ("annie", "round_closed", "/tasks/sentiment/rounds/1/"),
        ("annie", "round_opened", "/tasks/sentiment/"),
    ]
    assert round2.number == 2
