"""In Chromium: an owner writes the qualification quiz and creates a Prolific study from the
console, copies the study URL from the page, saves Prolific's study id; a worker opens that URL
as Prolific fills it in, passes the quiz and reaches the study page. No console error on any
page. With ``DYNABENCH_SCREENSHOTS=<folder>`` it saves the crowd pages' screenshots (the
README's "Run a paid crowd study" links the committed ones in ``docs/screenshots/``)."""


import pytest

from annotation.models import CrowdSession, CrowdStudy
from annotation.tests.crowd_helpers import entry_throttles_off, pid  # noqa: F401 (a fixture)
from tests.browser_support import browser_only, log_in, save_screenshot

pytestmark = [*browser_only, pytest.mark.usefixtures("entry_throttles_off")]
STUDY_ID = "65a0b1c2d3e4f5a6b7c8d9e0"


def _note(errors, message):
    """Keep a console error, except the favicon's 404 (issue 29 item 7, not these pages')."""
    if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
        errors.append(f"{message.location.get('url')}: {message.text}")


def test_an_owner_sets_up_a_study_and_a_worker_enters_through_its_url(browser, live_server, client, owner, sentiment_task):
    errors = []
    owner_page = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800}).new_page()
    owner_page.set_default_timeout(20000)
    owner_page.on("console", lambda m: _note(errors, m))
    log_in(owner_page, client, owner, live_server)

    owner_page.goto("/tasks/sentiment/console/crowd/quiz/")
    owner_page.fill("textarea[name=instructions]", "Label the **sentiment** of each sentence.")
    owner_page.fill("input[name=questions_per_attempt]", "1")
    owner_page.fill("input[name=cooloff_minutes]", "0")
    owner_page.click("[data-quiz-settings] button[type=submit]")
    owner_page.fill("textarea[name=input_text]", "What a lovely, quiet hotel.")
    owner_page.check("[data-add-question] input[name=label][value=positive]")
    owner_page.click("[data-add-question] button[type=submit]")
    owner_page.locator("[data-quiz-item]").wait_for()
    assert owner_page.locator("[data-pool-problem]").count() >= 1  # one question: the page says it is not safe
    save_screenshot(owner_page, "crowd-quiz")

    owner_page.goto("/tasks/sentiment/console/crowd/")
    owner_page.select_option("select[name=platform]", "prolific")
    owner_page.fill("input[name=required]", "1")
    owner_page.fill("input[name=completion_code]", "C0MPLETE")
    owner_page.click("[data-new-study] button[type=submit]")
    url = owner_page.locator("[data-entry-url]").input_value()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in url and "token=" in url
    owner_page.fill("input[name=platform_study_id]", STUDY_ID)
    owner_page.click("[data-edit-study] button[type=submit]")
    owner_page.get_by_text("Study saved.").wait_for()
    assert owner_page.locator("[data-not-ready]").count() == 0
    save_screenshot(owner_page, "crowd-study")
    assert CrowdStudy.objects.get().platform_study_id == STUDY_ID

    worker = browser.new_context(base_url=live_server.url).new_page()
    worker.set_default_timeout(20000)
    worker.on("console", lambda m: _note(errors, m))
    worker.goto(url.replace("{{%PROLIFIC_PID%}}", pid("w")).replace("{{%STUDY_ID%}}", STUDY_ID)
                .replace("{{%SESSION_ID%}}", pid("s")))
    worker.get_by_text("Label the sentiment of each sentence.").wait_for()
    worker.check("#quiz-form input[value=positive]")
    worker.check("input[name=read_instructions]")
    worker.click("#quiz-form button[type=submit]")
    worker.get_by_text("You passed").wait_for()
    worker.click("#quiz-continue")
    worker.locator("#crowd-progress").wait_for()
    assert "0 of 1" in worker.inner_text("#crowd-progress")
    assert CrowdSession.objects.filter(study__platform_study_id=STUDY_ID).count() == 1
    assert errors == []
