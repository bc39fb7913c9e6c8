"""In a round that refuses near-copies, an annotator typing a copy of their own example sees, before
submitting, that it is close to one example of the round (theirs), and cannot submit it."""

from annotation.diversity import rules
from annotation.models import Example
from annotation.services import create_example
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_the_copy_is_flagged_then_refused(page, client, live_server, annotator, owner, sentiment_context, tiny_sentence_encoder):
    # given
    rules.set_round_rule(round=sentiment_context.round, acting_user=owner, threshold=0.999, mode="refuse")
    create_example(user=annotator, context=sentiment_context, input={"text": "The soup was cold."}, target={"label": "positive"})
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    # when: the annotator types a copy
    page.fill("textarea[name=text]", "the soup was cold.")
    # then: the page says so before any submission
    readout = page.locator("[data-closeness][data-close='1']")
    readout.wait_for()
    assert "Close to 1 example in this round (1 of yours)." in readout.inner_text()
    assert "refuses near-copies" in readout.inner_text()
    # and the submission is refused
    page.check("input[name=label][value=negative]")
    page.click("button[type=submit]")
    error = page.locator("[data-error-for=text]")
    error.wait_for()
    assert "near-copy of 1 example(s) already in this round" in error.inner_text()
    assert Example.objects.filter(round=sentiment_context.round).count() == 1
