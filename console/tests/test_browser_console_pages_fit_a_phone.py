"""The console's pages fit a phone: at 390 px (and at 1280 px) no page scrolls sideways (tables
become one card per row) and the browser logs no error (no CSP violation, no 404 such as a
missing favicon). With ``DYNABENCH_SCREENSHOTS=<folder>`` each page is saved at each size there
as ``console-<page>-<width>x<height>.png`` (``docs/screenshots/`` holds the committed ones)."""


import pytest

from tests.browser_support import DESKTOP, PHONE, browser_only, fresh_page, horizontal_overflow, save_screenshot, start_over

pytestmark = browser_only

PAGES = [
    ("home", "/console/"),
    ("settings", "/tasks/sentiment/console/"),
    ("rounds", "/tasks/sentiment/console/rounds/"),
    ("close-round", "/tasks/sentiment/console/rounds/1/close"),
    ("uploads", "/tasks/sentiment/console/uploads/"),
    ("people", "/tasks/sentiment/console/people/"),
    ("person", "/tasks/sentiment/console/people/annie/"),
    ("dashboard", "/tasks/sentiment/console/dashboard/"),
    ("crowd", "/tasks/sentiment/console/crowd/"),
    ("crowd-quiz", "/tasks/sentiment/console/crowd/quiz/"),
    ("crowd-study", "/tasks/sentiment/console/crowd/studies/{study}/"),
    ("new-task", "/console/new"),
]
SIZES = {"phone": PHONE, "desktop": DESKTOP}


@pytest.fixture
def owned_site(sentiment_task, tiny_classifier_dir, annotator, owner):
    """Sentiment with a model in the loop, examples in every state, a quiz and a Prolific study,
    so every table has rows; the owner may add tasks."""
    from django.contrib.auth.models import Permission

    from annotation.models import CrowdStudy, Qualification, QuizItem
    from annotation.tests.conftest import put_in_loop
    from validation.tests.conftest import make_example

    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    make_example(sentiment_task, annotator, validation_state="verified_correct")
    make_example(sentiment_task, annotator)
    make_example(sentiment_task, annotator, model_wrong=False)
    quiz = Qualification.objects.create(task=sentiment_task, instructions="Label the sentiment.", questions_per_attempt=1)
    for n, (text, label) in enumerate((("A lovely, quiet hotel with kind staff.", "positive"), ("Cold and dirty.", "negative")), start=1):
        QuizItem.objects.create(qualification=quiz, position=n, input={"text": text}, answer={"label": label})
    CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", required=2, completion_code="C0MPLETE",
                              platform_study_id="65a0b1c2d3e4f5a6b7c8d9e0")
    owner.user_permissions.add(Permission.objects.get(codename="add_task", content_type__app_label="tasks"))
    return sentiment_task


def test_the_console_pages_fit_without_errors(browser, client, live_server, owner, owned_site, subtests):
    """Each page at each size is a subtest of its own (its own failure report and console-error
    list), seen as on a first visit (``start_over``: no cookie of the page before, a new session of
    the owner) in one browser page per size, on the one seeded site, which is built and flushed
    once instead of once per page."""
    from annotation.models import CrowdStudy

    study = CrowdStudy.objects.get().pk
    for size, viewport in SIZES.items():
        with fresh_page(browser, live_server, viewport) as page:
            errors = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            for name, path in PAGES:
                with subtests.test(msg=f"{name} at {size}"):
                    start_over(page, client, owner, live_server)
                    errors.clear()

                    response = page.goto(path.format(study=study))

                    assert response.status == 200, f"{name} at {size}: {page.url} answered {response.status}"
                    page.wait_for_load_state("networkidle")
                    assert horizontal_overflow(page) == 0, f"{name} at {size}: {page.url} scrolls sideways by {horizontal_overflow(page)} px"
                    assert errors == [], f"{name} at {size}: the browser logged errors"
                    save_screenshot(page, f"console-{name}-{viewport['width']}x{viewport['height']}")
