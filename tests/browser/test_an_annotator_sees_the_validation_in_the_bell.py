"""In Chromium: an owner validates the annotator's example; once the worker has run, the annotator's
bell shows one unread notification, the list names the example, and "Mark read" (HTMX) clears it."""

from annotation.models import Example
from community.services import set_preferences
from tests.api.conftest import run_worker
from tests.browser_support import browser_only, log_in
from validation.services import record_validation

pytestmark = browser_only


def test_the_bell_tells_the_annotator(page, client, live_server, sentiment_task, annotator, owner, django_capture_on_commit_callbacks):
    set_preferences(user=annotator, email=True, muted=["badge_earned"])  # the badges it earns are another test's subject
    round1 = sentiment_task.rounds.get(number=1)
    example = Example.objects.create(round=round1, context=round1.contexts.first(), author=annotator, input={"text": "Cold soup."},
                                     target={"label": "negative"}, model_output={"label": "positive"}, model_wrong=True)
    with django_capture_on_commit_callbacks(execute=True):
        record_validation(example=example, validator=owner, label="correct", mode="owner")
    run_worker()

    log_in(page, client, annotator, live_server)
    page.goto("/")
    bell = page.locator("#notification-bell")
    assert bell.get_attribute("aria-label") == "Notifications: 1 unread"
    bell.click()
    page.get_by_role("heading", name="Notifications").wait_for()
    assert f"Your example #{example.pk}" in page.locator("#notification-list").inner_text()
    page.get_by_role("button", name="Mark read").click()
    page.get_by_text("0 unread").wait_for()
    page.reload()
    assert page.locator("#notification-bell").get_attribute("aria-label") == "Notifications"
