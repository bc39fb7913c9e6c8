"""A prompt sent back unchanged is not an example (issue 17: with a label the model disagreed
with, the unchanged prompt counted as fooling the model)."""

from annotation.models import Example
from annotation.tests.conftest import model_label, other_label
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_the_unchanged_prompt_is_refused_with_a_reason(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    prompt = page.locator("[data-context-field=prompt]").inner_text()
    assert page.input_value("textarea[name=text]") == prompt  # prefilled as a starting point
    page.check(f"input[name=label][value={other_label(sentiment_task, model_label(sentiment_task, prompt))}]")
    page.click("button[type=submit]")
    error = page.locator("[data-error-for=text]")
    error.wait_for()
    assert "still the prompt as given" in error.inner_text()
    assert not Example.objects.exists()
