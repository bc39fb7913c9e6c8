"""The round page reads as words (issue 17): validation states have their spaces ("Verified
correct", not "Verifiedcorrect") and closing a round states the split ratios in words, not
as a Python dict."""

from tests.browser_support import browser_only, log_in
from validation.tests.conftest import make_example

pytestmark = browser_only


def test_states_and_split_ratios_read_as_words(page, client, live_server, sentiment_task, annotator, owner):
    make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct")
    log_in(page, client, owner, live_server)
    page.goto("/tasks/sentiment/rounds/1/")
    text = page.locator("main").inner_text()
    assert "Verified correct" in text and "Verifiedcorrect" not in text
    assert "Verified incorrect" in text
    page.click("#close-round-link")
    page.get_by_role("heading", name="Close").first.wait_for()
    text = page.locator("main").inner_text()
    assert "0.8/0.1/0.1" in text or "train 80%" in text
    assert "{'train'" not in text and "{&#x27;train" not in page.content()
