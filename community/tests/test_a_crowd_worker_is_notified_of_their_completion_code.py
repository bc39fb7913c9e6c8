"""When a crowd worker finishes a study, annotation sends ``crowd_study_completed`` after the commit;
community's receiver queues a job that leaves the completion code in the worker's notifications."""

from annotation import crowd
from annotation.models import CrowdSession, Example
from annotation.tests.crowd_helpers import enter, pid, prolific_study
from community.models import Notification
from tests.api.conftest import run_worker


def test_the_code_reaches_the_notifications(sentiment_task, django_capture_on_commit_callbacks):
    round1 = sentiment_task.current_round()
    study = prolific_study(round1, completion_code="C0DE42")
    session = enter(study, pid(7), "a" * 24)
    Example.objects.create(round=round1, context=round1.contexts.first(), author=session.worker.user, input={"text": "Cold soup."},
                           target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True)
    CrowdSession.objects.filter(pk=session.pk).update(progress=1)  # as create_example counts it

    with django_capture_on_commit_callbacks(execute=True):
        crowd.complete(session=session)
    assert not Notification.objects.exists()  # queued, not written in the request
    run_worker()

    note = Notification.objects.get(user=session.worker.user)
    assert note.kind == "study_completion_code" and "C0DE42" in note.message
    assert note.url == "/crowd/sentiment/r1/prolific/write/progress/"
