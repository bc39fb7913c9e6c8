"""The sandbox has an hourly limit per person, shown on the page (issue 17: unlimited before)."""

from annotation.models import Example
from tests.browser_support import browser_only

pytestmark = browser_only


def test_the_sandbox_counts_down_and_stops_at_the_hourly_limit(page, settings, sentiment_task, sentiment_model):
    settings.SANDBOX_TRIES_PER_HOUR = 3
    page.goto("/tasks/sentiment/sandbox/")
    remaining = page.locator("[data-sandbox-remaining]")
    assert remaining.inner_text().startswith("3 of 3 tries left this hour")
    for left in (2, 1, 0):
        page.fill("textarea[name=text]", f"Try number {3 - left}: the pastry was fine.")
        page.click("button[type=submit]")
        page.locator("[data-model-label]").wait_for()
        page.wait_for_function("(n) => document.querySelector('[data-sandbox-remaining]').textContent.startsWith(n + ' of 3')", arg=left)
    assert "they come back in" in remaining.inner_text()
    page.fill("textarea[name=text]", "One more try.")
    page.click("button[type=submit]")
    error = page.locator("[data-error-for=form]")
    error.wait_for()
    assert "You have used all 3 sandbox tries of this hour" in error.inner_text()
    assert not Example.objects.exists()
