"""On the create page, a Submit that fails without a page to show says so beside the form and keeps
what the annotator wrote (``static/js/request-errors.js``): a 500, the platform's 503 while Redis is
out (its message, ``HX-Reswap: none``), and no answer at all. Before, htmx dropped a 500 and the
page did nothing. The server's answers are stood in for by Playwright's routing."""

import pytest

from tests.browser_support import browser_only, log_in

pytestmark = browser_only

TEXT = "The pool was closed all week and nobody told us."
OUTAGE = ('<p class="error" role="alert" data-request-error="redis_unavailable">'
          "The platform cannot reach its Redis server just now. Try again in a minute.</p>")


@pytest.mark.parametrize(("answer", "says"), [
    (lambda route: route.fulfill(status=500, content_type="text/html", body="<h1>Server Error (500)</h1>"), "HTTP 500"),
    (lambda route: route.fulfill(status=503, content_type="text/html", headers={"HX-Reswap": "none"}, body=OUTAGE),
     "cannot reach its Redis server"),
    (lambda route: route.abort(), "could not be reached"),
], ids=["server-error", "redis-outage", "no-answer"])
def test_a_failed_submit_shows_why_and_keeps_the_text(page, client, live_server, annotator, sentiment_task, sentiment_model,
                                                        answer, says):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    page.fill("textarea[name=text]", TEXT)
    page.check("input[name=label][value=negative]")
    page.route("**/write/submit*", answer)

    page.click("button[type=submit]")
    note = page.locator("#workspace form [data-request-failed]")
    note.wait_for()

    assert says in note.inner_text()
    assert note.get_attribute("role") == "alert"
    assert page.input_value("textarea[name=text]") == TEXT
    assert page.locator("button[type=submit]").is_enabled()
