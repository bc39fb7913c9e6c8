"""A Prolific worker's whole visit in headless Chromium: arrive with Prolific's parameters, fail
the qualification quiz once, pass it, write the required examples, get the completion code;
a second visit with the same PROLIFIC_PID resumes and gets no second code."""

import pytest

from annotation.models import CrowdSession, CrowdStudy, CrowdWorker, Example, Qualification, QuizAttempt, QuizItem
from tests.browser_support import HANG_MS, browser_only

pytestmark = browser_only

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
STUDY_URL = f"/crowd/sentiment/r1/prolific/?PROLIFIC_PID={PID}&STUDY_ID=study77&SESSION_ID=sess88&token=" + "{token}"


def new_page(browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    return page


@pytest.fixture
def study(sentiment_task, sentiment_model):
    qualification = Qualification.objects.create(
        task=sentiment_task, instructions="Label the **sentiment** of each sentence.", pass_mark=1.0, max_attempts=3,
        cooloff_minutes=0,
    )
    QuizItem.objects.create(qualification=qualification, position=1, input={"text": "I loved every minute of it."}, answer={"label": "positive"})
    QuizItem.objects.create(qualification=qualification, position=2, input={"text": "The food was cold and the staff rude."}, answer={"label": "negative"})
    return CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", required=2, completion_code="C1OSE42",
                                     platform_study_id="study77")


def answer_quiz(page, labels):
    for item, label in zip(QuizItem.objects.order_by("position"), labels):
        page.check(f"input[name='item-{item.pk}-label'][value={label}]")
    page.check("input[name=read_instructions]")
    page.click("#quiz-form button[type=submit]")


def test_a_prolific_worker_qualifies_writes_and_finishes_once(browser, live_server, study):
    page = new_page(browser, live_server)
    page.goto(STUDY_URL.format(token=study.entry_token))

    # Onboarding first: the instructions and the quiz, never the gold answers.
    page.get_by_text("Label the sentiment of each sentence.").wait_for()
    assert "/tasks/sentiment/qualification/" in page.url
    assert "negative" not in page.locator("#quiz-form fieldset legend").all_inner_texts()
    answer_quiz(page, ["negative", "negative"])
    page.get_by_text("Not passed").wait_for()
    result = page.inner_text("#quiz-result")
    assert "2 attempts left" in result and "right" not in result and "of 2" not in result  # pass or fail, never a score
    page.click("#quiz-retry")
    answer_quiz(page, ["positive", "negative"])
    page.get_by_text("You passed").wait_for()
    page.click("#quiz-continue")

    # The study page sends the worker to the create page; they write the required examples.
    page.click("#crowd-work")
    for text in ["The hotel was fine, I suppose, if you like noise.", "Best pizza in town, hands down."]:
        page.locator("textarea[name=text]").wait_for()
        page.fill("textarea[name=text]", text)
        page.check("input[name=label][value=positive]")
        page.click("button[type=submit]")
        page.locator("#workspace .outcome").wait_for()
        page.goto("/tasks/sentiment/write/")
    page.get_by_text("2 of 2 examples done").wait_for()
    page.click("#crowd-banner a")
    page.click("#crowd-finish")
    assert page.inner_text("#completion-code") == "C1OSE42"
    assert page.locator("a[href='https://app.prolific.com/submissions/complete?cc=C1OSE42']").count() == 1

    worker = CrowdWorker.objects.get(platform_worker_id=PID)
    assert PID not in worker.user.username and not worker.user.has_usable_password()
    assert list(QuizAttempt.objects.filter(user=worker.user).values_list("passed", flat=True)) == [False, True]
    assert Example.objects.filter(author=worker.user).count() == 2
    session = CrowdSession.objects.get(worker=worker)
    assert (session.progress, session.completion_code, session.platform_session, session.platform_study) == (2, "C1OSE42", "sess88", "study77")
    finished_at = session.completed_at

    # A second visit with the same PROLIFIC_PID: the same account, a clear page, no second code.
    again = new_page(browser, live_server)
    response = again.goto(STUDY_URL.format(token=study.entry_token))
    assert response.status == 409
    again.get_by_text("You already finished this study").wait_for()
    assert "C1OSE42" not in again.content()
    assert CrowdWorker.objects.count() == 1 and CrowdSession.objects.count() == 1
    assert CrowdSession.objects.get().completed_at == finished_at
