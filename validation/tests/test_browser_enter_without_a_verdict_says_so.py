"""In the review queue, Enter (or Submit) with no verdict picked says what to do, next to the
verdicts, instead of doing nothing; picking a verdict clears the message and Enter submits."""

from tests.browser_support import browser_only, log_in
from validation.models import Validation
from validation.tests.conftest import make_example

pytestmark = browser_only


def test_enter_without_a_verdict_asks_for_one(page, client, live_server, validator, annotator, sentiment_task):
    example = make_example(sentiment_task, annotator)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")
    page.locator("#review-form").wait_for()

    page.keyboard.press("Enter")

    message = page.locator("[data-verdict-needed]")
    message.wait_for()
    assert message.inner_text() == "Pick a verdict first: 1 correct, 2 incorrect or 3 flag (or click one), then Enter."
    assert not Validation.objects.filter(example=example).exists()

    page.keyboard.press("1")
    assert page.locator("[data-verdict-needed]").count() == 0
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Nothing left to validate").wait_for()
    assert Validation.objects.get(example=example).label == "correct"
    assert errors == []  # no CSP violation from htmx's swap, no 404
