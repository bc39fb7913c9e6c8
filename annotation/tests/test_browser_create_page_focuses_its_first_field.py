"""On a full page load the create page puts the focus in its first field, so a keyboard user
types at once instead of pressing Tab through the page's links (14 of them before)."""

from annotation.tests.conftest import put_in_loop
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_the_first_field_has_the_focus_on_load(page, client, live_server, annotator, sentiment_task, tiny_classifier_dir):
    put_in_loop(sentiment_task, tiny_classifier_dir, "tiny-sentiment")
    log_in(page, client, annotator, live_server)

    page.goto("/tasks/sentiment/write/")

    page.wait_for_function("() => document.activeElement && document.activeElement.name === 'text'")
    page.keyboard.type("Typed straight away.")
    assert page.input_value("textarea[name=text]").startswith("Typed straight away.")  # typed into the (pre-filled) field
