"""Crowd study URLs: Prolific and MTurk parameters, pseudonymous accounts, bad links, one
completion per worker and study, the platform worker id never shown."""

import pytest
from django.urls import reverse

from annotation import crowd
from annotation.models import CrowdSession, CrowdWorker
from annotation.services import create_example, retract_example
from annotation.tests.crowd_helpers import entry_throttles_off, entry_path, mturk_id, mturk_study, mturk_url, pid, prolific_study, prolific_url  # noqa: F401 (a fixture)
from dynabench.errors import RuleError

pytestmark = pytest.mark.usefixtures("entry_throttles_off")


@pytest.fixture
def prolific(sentiment_task):
    return prolific_study(sentiment_task.current_round())


@pytest.fixture
def mturk(sentiment_task):
    return mturk_study(sentiment_task.current_round(), activity="validate")


def test_a_link_without_the_parameters_gets_a_page_naming_them_and_no_account(client, prolific):
    response = client.get(f"{entry_path(prolific)}?PROLIFIC_PID={pid(1)}&token={prolific.entry_token}")

    assert response.status_code == 400
    assert b"SESSION_ID, STUDY_ID" in response.content
    assert not CrowdWorker.objects.exists() and "_auth_user_id" not in client.session


def test_a_malformed_id_or_an_unknown_study_is_refused(client, prolific):
    assert client.get(prolific_url(prolific, "<script>")).status_code == 400
    assert client.get(f"/crowd/sentiment/r1/mturk/?workerId={mturk_id(1)}&assignmentId=A&hitId=H&token=t").status_code == 404
    assert client.get("/crowd/sentiment/r1/upwork/?x=1").status_code == 404
    assert not CrowdWorker.objects.exists()


def test_arrival_logs_in_a_passwordless_pseudonymous_account_and_resumes_it(client, prolific):
    first = client.get(prolific_url(prolific, pid(1), pid("s1")))
    assert first.status_code == 302 and first.url == reverse("annotation:crowd_progress", args=["sentiment", 1, "prolific", "write"])
    worker = CrowdWorker.objects.get()
    assert worker.user.username == crowd.worker_username("prolific", pid(1)) and not worker.user.has_usable_password()
    assert worker.user.groups.filter(name="annotator").exists() and not worker.user.groups.filter(name="validator").exists()

    page = client.get(first.url)
    assert page.status_code == 200 and b"0 of 1" in page.content and pid(1).encode() not in page.content

    client.logout()
    again = client.get(prolific_url(prolific, pid(1), pid("s1")))
    assert again.status_code == 302
    assert CrowdWorker.objects.count() == 1 and CrowdSession.objects.count() == 1
    assert CrowdSession.objects.get().platform_session == pid("s1")


def test_the_code_is_issued_once_and_never_before_the_work_is_done(client, prolific, sentiment_task, sentiment_context):
    client.get(prolific_url(prolific, pid(2)))
    finish = reverse("annotation:crowd_finish", args=["sentiment", 1, "prolific"])
    early = client.post(finish)
    assert early.status_code == 409 and b"0 of 1 done" in early.content and b"PCODE" not in early.content

    session = CrowdSession.objects.select_related("worker__user").get()
    create_example(user=session.worker.user, context=sentiment_context, input={"text": "Lovely day."}, target={"label": "positive"})
    done = client.post(finish)
    assert done.status_code == 200 and b"PCODE" in done.content
    again = client.post(finish)
    assert again.status_code == 409 and b"PCODE" not in again.content
    revisit = client.get(prolific_url(prolific, pid(2)))
    assert revisit.status_code == 409 and b"already finished" in revisit.content and b"PCODE" not in revisit.content
    with pytest.raises(RuleError):
        crowd.complete(session=session)


def test_a_retracted_example_does_not_count_toward_the_completion_code(client, prolific, sentiment_context):
    client.get(prolific_url(prolific, pid(5)))
    user = CrowdSession.objects.select_related("worker__user").get().worker.user
    example = create_example(user=user, context=sentiment_context, input={"text": "Lovely day."}, target={"label": "positive"})
    retract_example(example=example, user=user)

    refused = client.post(reverse("annotation:crowd_finish", args=["sentiment", 1, "prolific"]))

    assert refused.status_code == 409 and b"retracted examples do not count" in refused.content
    assert b"PCODE" not in refused.content and CrowdSession.objects.get().completed_at is None


def test_mturk_previews_make_no_account_and_finishing_shows_the_submit_form(client, mturk, sentiment_task):
    preview = client.get(f"{entry_path(mturk)}?assignmentId={crowd.MTURK_PREVIEW}&hitId={mturk.platform_study_id}&token={mturk.entry_token}")
    assert preview.status_code == 200 and b"Accept the HIT" in preview.content and not CrowdWorker.objects.exists()

    client.get(mturk_url(mturk, mturk_id(1), "3ASSIGN1AAAAAAAA"))
    session = CrowdSession.objects.get()
    crowd.note_progress(user=session.worker.user, round=sentiment_task.current_round(), activity="validate")
    done = client.post(reverse("annotation:crowd_finish", args=["sentiment", 1, "mturk"]))
    assert done.status_code == 200
    assert b'action="https://www.mturk.com/mturk/externalSubmit"' in done.content and b'value="3ASSIGN1AAAAAAAA"' in done.content
    assert "https://www.mturk.com/mturk/externalSubmit" in done.headers["Content-Security-Policy"]


def test_progress_counts_only_the_studys_activity_in_its_round(prolific, sentiment_task, nli_task):
    entered = crowd.enter(study=prolific, entry=crowd.parse_entry("prolific", {
        "PROLIFIC_PID": pid(3), "SESSION_ID": pid("s3"), "STUDY_ID": prolific.platform_study_id, "token": prolific.entry_token}))
    user = entered.session.worker.user
    assert crowd.note_progress(user=user, round=sentiment_task.current_round(), activity="validate") == 0
    assert crowd.note_progress(user=user, round=nli_task.current_round(), activity="write") == 0
    assert crowd.note_progress(user=user, round=sentiment_task.current_round(), activity="write") == 1
