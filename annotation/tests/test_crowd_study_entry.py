"""Crowd study URLs: Prolific and MTurk parameters, pseudonymous accounts, bad links, one
completion per worker and study, the platform worker id never shown."""

import pytest
from django.urls import reverse

from annotation import crowd
from annotation.models import CrowdSession, CrowdStudy, CrowdWorker
from dynabench.errors import RuleError


@pytest.fixture
def prolific(sentiment_task):
    return CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", required=1, completion_code="PCODE")


@pytest.fixture
def mturk(sentiment_task):
    return CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="mturk", required=1, activity="validate")


def url(platform, **params):
    from urllib.parse import urlencode

    return f"/crowd/sentiment/r1/{platform}/?{urlencode(params)}"


def test_a_link_without_the_parameters_gets_a_page_naming_them_and_no_account(client, prolific):
    response = client.get(url("prolific", PROLIFIC_PID="abc"))

    assert response.status_code == 400
    assert b"SESSION_ID, STUDY_ID" in response.content
    assert not CrowdWorker.objects.exists() and "_auth_user_id" not in client.session


def test_a_malformed_id_or_an_unknown_study_is_refused(client, prolific):
    assert client.get(url("prolific", PROLIFIC_PID="<script>", STUDY_ID="s", SESSION_ID="x")).status_code == 400
    assert client.get(url("mturk", workerId="W", assignmentId="A", hitId="H")).status_code == 404
    assert client.get("/crowd/sentiment/r1/upwork/?x=1").status_code == 404
    assert not CrowdWorker.objects.exists()


def test_arrival_logs_in_a_passwordless_pseudonymous_account_and_resumes_it(client, prolific):
    first = client.get(url("prolific", PROLIFIC_PID="PID1", STUDY_ID="ST", SESSION_ID="SE"))
    assert first.status_code == 302 and first.url == reverse("annotation:crowd_progress", args=["sentiment", 1, "prolific"])
    worker = CrowdWorker.objects.get()
    assert worker.user.username == crowd.worker_username("prolific", "PID1") and not worker.user.has_usable_password()
    assert worker.user.groups.filter(name="annotator").exists() and not worker.user.groups.filter(name="validator").exists()

    page = client.get(first.url)
    assert page.status_code == 200 and b"0 of 1" in page.content and b"PID1" not in page.content

    client.logout()
    client.get(url("prolific", PROLIFIC_PID="PID1", STUDY_ID="ST", SESSION_ID="SE2"))
    assert CrowdWorker.objects.count() == 1 and CrowdSession.objects.count() == 1
    assert CrowdSession.objects.get().platform_session == "SE"  # the first visit's session is kept


def test_the_code_is_issued_once_and_never_before_the_work_is_done(client, prolific, sentiment_task):
    client.get(url("prolific", PROLIFIC_PID="PID2", STUDY_ID="ST", SESSION_ID="SE"))
    finish = reverse("annotation:crowd_finish", args=["sentiment", 1, "prolific"])
    early = client.post(finish)
    assert early.status_code == 409 and b"0 of 1 done" in early.content and b"PCODE" not in early.content

    session = CrowdSession.objects.get()
    crowd.note_progress(user=session.worker.user, round=sentiment_task.current_round(), activity="write")
    done = client.post(finish)
    assert done.status_code == 200 and b"PCODE" in done.content
    again = client.post(finish)
    assert again.status_code == 409 and b"PCODE" not in again.content
    revisit = client.get(url("prolific", PROLIFIC_PID="PID2", STUDY_ID="ST", SESSION_ID="SE"))
    assert revisit.status_code == 409 and b"already finished" in revisit.content and b"PCODE" not in revisit.content
    with pytest.raises(RuleError):
        crowd.complete(session=session)


def test_mturk_previews_make_no_account_and_finishing_shows_the_submit_form(client, mturk, sentiment_task):
    preview = client.get(url("mturk", workerId="W1", assignmentId=crowd.MTURK_PREVIEW, hitId="H1"))
    assert preview.status_code == 200 and b"Accept the HIT" in preview.content and not CrowdWorker.objects.exists()

    client.get(url("mturk", workerId="W1", assignmentId="ASSIGN1", hitId="H1"))
    session = CrowdSession.objects.get()
    crowd.note_progress(user=session.worker.user, round=sentiment_task.current_round(), activity="validate")
    done = client.post(reverse("annotation:crowd_finish", args=["sentiment", 1, "mturk"]))
    assert done.status_code == 200
    assert b'action="https://www.mturk.com/mturk/externalSubmit"' in done.content and b'value="ASSIGN1"' in done.content
    assert "https://www.mturk.com/mturk/externalSubmit" in done.headers["Content-Security-Policy"]


def test_progress_counts_only_the_studys_activity_in_its_round(prolific, sentiment_task, nli_task):
    session = crowd.enter(study=prolific, entry=crowd.Entry(worker_id="PID3", session="S", study="T"))
    user = session.worker.user
    assert crowd.note_progress(user=user, round=sentiment_task.current_round(), activity="validate") == 0
    assert crowd.note_progress(user=user, round=nli_task.current_round(), activity="write") == 0
    assert crowd.note_progress(user=user, round=sentiment_task.current_round(), activity="write") == 1
