"""A study can only be put on an open round (a clear refusal otherwise, on the console and in the
service), and closing a round ends its studies: a worker who comes back is told the study
ended, and new workers are refused with the same page."""

import pytest
from django.test import Client

from annotation import crowd_setup
from annotation.models import CrowdStudy
from annotation.tests.crowd_helpers import entry_throttles_off, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)
from dynabench.errors import RuleError
from tasks.models import Round
from validation.round_close import close_round
from validation.services import record_validation
from validation.tests.conftest import make_example

pytestmark = pytest.mark.usefixtures("entry_throttles_off")


def test_the_console_refuses_a_study_on_a_closed_round(client, owner, sentiment_task):
    Round.objects.filter(pk=sentiment_task.current_round().pk).update(status=Round.Status.CLOSED)
    client.force_login(owner)
    refused = client.post("/tasks/sentiment/console/crowd/", {
        "round": sentiment_task.current_round().pk, "platform": "prolific", "activity": "write", "required": 3,
        "participant_cap": 50, "completion_code": "C0DE", "active": "on"})
    assert refused.status_code == 409
    assert "is closed: a study can only run on an open round" in refused.content.decode()
    assert not CrowdStudy.objects.exists()
    with pytest.raises(RuleError) as error:
        crowd_setup.save_study(round=sentiment_task.current_round(), acting_user=owner, platform="mturk")
    assert error.value.code == "round_closed"


def test_closing_the_round_ends_its_studies_with_a_page_for_workers(owner, sentiment_task, annotator):
    round = sentiment_task.current_round()
    study = prolific_study(round)
    worker = Client()
    assert worker.get(prolific_url(study, pid("w"))).status_code == 302
    for n in range(10):
        example = make_example(sentiment_task, annotator, text=f"Validated example {n}")
        record_validation(example=example, validator=owner, label="correct", mode="owner")

    close_round(round=round, acting_user=owner)

    study.refresh_from_db()
    assert study.ended_at is not None and not study.active
    progress = worker.get("/crowd/sentiment/r1/prolific/progress/")
    assert progress.status_code == 410 and b"This study has ended" in progress.content
    newcomer = Client().get(prolific_url(study, pid("late")))
    assert newcomer.status_code == 410 and b"This study has ended" in newcomer.content
