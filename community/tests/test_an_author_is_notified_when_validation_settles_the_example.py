"""When validation settles an example (here an owner's decision), its author gets a notification from a
job (never in the request that settled it)."""

from annotation.models import Example
from community.models import Notification
from tests.api.conftest import run_worker
from validation.services import record_validation


def test_the_author_hears_that_the_example_was_validated(sentiment_task, annotator, owner, django_capture_on_commit_callbacks):
    round1 = sentiment_task.rounds.get(number=1)
    example = Example.objects.create(round=round1, context=round1.contexts.first(), author=annotator, input={"text": "Cold soup."},
                                     target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True)
    with django_capture_on_commit_callbacks(execute=True):
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    assert not Notification.objects.exists()  # queued, not written in the request
    run_worker()

    note = Notification.objects.get(user=annotator, kind="example_validated")
    assert note.kind == "example_validated" and f"#{example.pk}" in note.message and "validated as correct" in note.message
