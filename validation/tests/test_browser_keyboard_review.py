"""A validator works the review queue with the keyboard only: ten verdicts and one flag, no mouse.

Before issue 17 flagging by keyboard (``f`` then Enter) always failed: ``f`` ticked the flag
but left the focus on the radio button, so Enter posted the flag without its required reason
(and a reason typed afterwards fired other single-key shortcuts instead of filling the field).
"""

import pytest

from tests.browser_support import HANG_MS, browser_only, log_in
from validation.models import Validation
from validation.tests.conftest import make_example

pytestmark = browser_only


def shown_example(page) -> int:
    return int(page.locator("#review [data-example-id]").get_attribute("data-example-id"))


def wait_for_next(page, previous: int) -> int:
    page.wait_for_function(
        "(prev) => { const el = document.querySelector('#review [data-example-id]');"
        " return el && el.dataset.exampleId !== String(prev); }",
        arg=previous,
    )
    return shown_example(page)


def test_a_validator_validates_ten_examples_and_flags_one_without_the_mouse(page, client, live_server, sentiment_task, annotator, validator):
    examples = [make_example(sentiment_task, annotator, model_wrong=True, label="positive") for _ in range(11)]
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")

    current = shown_example(page)
    judged = []
    for _ in range(10):
        page.keyboard.press("1")
        assert page.locator('input[name=label][value=correct]').is_checked()
        page.keyboard.press("Enter")
        judged.append(current)
        current = wait_for_next(page, current)
        # the focus is on the new example, so the next key works at once
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'review-heading'", timeout=HANG_MS)

    page.keyboard.press("f")
    assert page.evaluate("document.activeElement.name") == "flag_reason"
    page.keyboard.type("spam, not a review")
    page.keyboard.press("Enter")
    page.get_by_text(f"Saved: flagged on example {current}.").wait_for()

    correct = Validation.objects.filter(validator=validator, label="correct")
    assert sorted(correct.values_list("example_id", flat=True)) == sorted(judged)
    flag = Validation.objects.get(validator=validator, label="flagged")
    assert (flag.example_id, flag.metadata["flag_reason"]) == (current, "spam, not a review")
    assert len({*judged, current}) == 11 and {*judged, current} == {e.pk for e in examples}


def test_the_question_mark_lists_the_keys(page, client, live_server, sentiment_task, annotator, validator):
    make_example(sentiment_task, annotator, model_wrong=True)
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")
    page.keyboard.press("?")
    dialog = page.locator("dialog#keys-help")
    assert dialog.is_visible()
    assert "Flag: the reason field opens" in dialog.inner_text()
    page.keyboard.press("Escape")
    assert not dialog.is_visible()


@pytest.mark.parametrize("key", ["2", "i"])
def test_incorrect_by_key_opens_the_correction(page, client, live_server, sentiment_task, annotator, validator, key):
    make_example(sentiment_task, annotator, model_wrong=True, label="positive")
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")
    page.keyboard.press(key)
    assert page.locator("#corrected_label").is_visible()
    page.keyboard.press("Enter")
    page.get_by_text("Saved: incorrect").wait_for()
    assert Validation.objects.get(validator=validator).label == "incorrect"
