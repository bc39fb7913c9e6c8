"""Text over a field's limit is never cut silently (issue 17): a counter under the field turns
amber before the limit and red past it, and submitting too long text keeps it and says why."""

from annotation.models import Example
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_the_counter_warns_before_the_limit_and_nothing_is_cut(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    counter = page.locator("[data-char-count-for=id_text]")
    assert "/ 500 characters" in counter.inner_text()

    page.fill("textarea[name=text]", "a" * 300)
    assert counter.inner_text().startswith("300 / 500")
    assert counter.get_attribute("class") == "char-count"

    page.fill("textarea[name=text]", "a" * 460)
    assert "near" in counter.get_attribute("class")

    too_long = "b" * 520
    page.fill("textarea[name=text]", too_long)
    assert page.input_value("textarea[name=text]") == too_long  # not cut at 500
    assert "over" in counter.get_attribute("class")
    assert "20 over the limit" in counter.inner_text()

    page.check("input[name=label][value=positive]")
    page.click("button[type=submit]")
    error = page.locator("[data-error-for=text]")
    error.wait_for()
    assert "has 520 characters; the limit is 500" in error.inner_text()
    assert page.input_value("textarea[name=text]") == too_long
    assert not Example.objects.exists()
