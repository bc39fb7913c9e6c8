"""A study link is refused with a clear page, and makes no account, when it does not prove it
comes from the study: a wrong or missing token, another study's ``STUDY_ID``/``hitId``, another
platform's worker id, a session id already used by another worker, a study not set up or ended."""

import pytest
from django.test import Client

from annotation.models import CrowdWorker
from annotation.tests.crowd_helpers import entry_throttles_off, entry_path, mturk_id, mturk_study, mturk_url, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)
from tasks.models import Round

pytestmark = pytest.mark.usefixtures("entry_throttles_off")


@pytest.fixture
def study(sentiment_task):
    return prolific_study(sentiment_task.current_round())


def refused(url, status, text):
    answer = Client().get(url)
    assert answer.status_code == status, answer.content[:300]
    assert text in answer.content.decode() and 'id="crowd-problem"' in answer.content.decode()
    return answer


def test_a_wrong_or_missing_token_is_refused(study):
    refused(prolific_url(study, pid(1), token="not-the-token"), 403, "missing its token or has a wrong one")
    refused(prolific_url(study, pid(1), token=""), 400, "missing token")
    assert not CrowdWorker.objects.exists()


def test_another_studys_id_is_refused(study):
    refused(prolific_url(study, pid(1), study_id="0123456789abcdef01234567"), 403, "belongs to another study")
    assert not CrowdWorker.objects.exists()


def test_a_study_without_its_platform_id_takes_nobody(sentiment_task):
    study = prolific_study(sentiment_task.current_round(), platform_study_id="")
    refused(prolific_url(study, pid(1), study_id="0123456789abcdef01234567"), 409, "has not finished setting up")


def test_another_platforms_worker_id_is_refused(sentiment_task, study):
    # An MTurk-shaped id in a Prolific link, and a Prolific id in an MTurk link.
    refused(prolific_url(study, mturk_id(1)), 403, "is a Mechanical Turk worker id")
    hit = mturk_study(sentiment_task.current_round())
    refused(mturk_url(hit, pid(1)), 403, "is a Prolific worker id")
    assert not CrowdWorker.objects.exists()


def test_a_worker_id_is_bound_to_the_platform_it_first_came_from(sentiment_task, study):
    hit = mturk_study(sentiment_task.current_round())
    both = "123456789012345678901234"  # digits only: the shape of either platform's ids
    assert Client().get(mturk_url(hit, both)).status_code == 302
    refused(prolific_url(study, both), 403, "belongs to an account of another platform")
    assert CrowdWorker.objects.get().platform == "mturk"


def test_a_session_id_belongs_to_one_worker(study):
    assert Client().get(prolific_url(study, pid(1), pid("shared"))).status_code == 302
    refused(prolific_url(study, pid(2), pid("shared")), 403, "already belongs to another worker")
    assert CrowdWorker.objects.count() == 1


def test_an_mturk_preview_never_makes_an_account_even_with_a_worker_id(sentiment_task):
    hit = mturk_study(sentiment_task.current_round())
    answer = Client().get(f"{entry_path(hit)}?workerId={mturk_id(1)}&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE"
                          f"&hitId={hit.platform_study_id}&token={hit.entry_token}")
    assert answer.status_code == 200 and b"Accept the HIT" in answer.content
    assert not CrowdWorker.objects.exists() and "_auth_user_id" not in Client().session


def test_a_study_of_a_closed_round_says_it_ended(sentiment_task, study):
    Round.objects.filter(pk=study.round_id).update(status=Round.Status.CLOSED)
    refused(prolific_url(study, pid(1)), 410, "This study has ended")
    assert not CrowdWorker.objects.exists()
