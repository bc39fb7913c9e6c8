"""The owner's pages that hang off the console fit a phone: at 390 px the uploads page, the gold
page, a round's crowd pay page and a person's page (``/users/<name>/``), each with rows in every
table, do not scroll sideways (``document.documentElement.scrollWidth <= 390``) and log no browser
error; the gold and pay pages keep the console's tabs, with Crowd current."""

import pytest

from tests.browser_support import PHONE, browser_only, fresh_page, save_screenshot, start_over

pytestmark = browser_only

PAGES = [
    ("uploads", "/tasks/sentiment/console/uploads/"),
    ("gold", "/tasks/sentiment/gold/"),
    ("pay", "/tasks/sentiment/rounds/1/pay/"),
    ("user", "/users/{annotator}/"),
]


@pytest.fixture
def busy_site(sentiment_task, annotator, validator, owner, settings, tmp_path):
    """Sentiment with an upload of a long-named file, a gold item, a Prolific study with a paid
    worker, and an annotator with examples and validations in two rounds' worth of rows."""
    from annotation.models import CrowdStudy
    from annotation.tests.crowd_helpers import enter
    from tasks.models import Upload
    from validation.gold import mark_gold
    from validation.services import record_validation
    from validation.tests.conftest import leased, make_example

    settings.MEDIA_ROOT = tmp_path / "media"
    Upload.objects.create(task=sentiment_task, uploaded_by=owner, target="dataset", original_name="a-rather-long-file-name-" * 3 + ".jsonl",
                          format="jsonl", rows=1200, options={"name": "sentiment-extra-dev-set-with-a-long-name"}, status="done")
    gold = make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct")
    mark_gold(example=gold, acting_user=owner)
    for _ in range(3):
        example = make_example(sentiment_task, annotator, model_wrong=True)
        record_validation(example=leased(example, validator), validator=validator, label="correct", mode="user")
    study = CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", required=1,
                                      platform_study_id="65a0b1c2d3e4f5a6b7c8d9e0", completion_code="C0MPLETE")
    session = enter(study, "PIDX", "S")
    worked = make_example(sentiment_task, session.worker.user, model_wrong=True)
    record_validation(example=worked, validator=owner, label="correct", mode="owner")
    return sentiment_task


def test_the_pages_fit_a_phone_and_keep_the_console_tabs(browser, client, live_server, owner, annotator, busy_site, subtests):
    with fresh_page(browser, live_server, PHONE) as page:
        errors = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        for name, path in PAGES:
            with subtests.test(msg=name):
                start_over(page, client, owner, live_server)
                errors.clear()

                response = page.goto(path.format(annotator=annotator.username))

                assert response.status == 200, f"{name}: {page.url} answered {response.status}"
                page.wait_for_load_state("networkidle")
                width = page.evaluate("() => document.documentElement.scrollWidth")
                assert width <= PHONE["width"], f"{name}: {page.url} is {width} px wide at {PHONE['width']} px"
                assert errors == [], f"{name}: the browser logged errors"
                if name in ("gold", "pay"):
                    assert page.locator("nav.tabs a[aria-current=page]").inner_text() == "Crowd"
                save_screenshot(page, f"owner-{name}-{PHONE['width']}x{PHONE['height']}")
