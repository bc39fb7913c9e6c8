"""Pages that htmx updates in place log no error under the strict Content Security Policy
(``style-src 'self'``): re-ranking the leaderboard with a weight slider, and the write page
answering a refused example with 422 and the form again.

The elements of the swapped part first get a style through the CSSOM, as the browser itself does
(a textarea resized by hand), or an extension, a password manager or a page script may: htmx's
settling copies the attributes named in ``htmx.config.attributesToSettle`` from each old element to
its new twin (same id), and copying ``style`` with ``setAttribute`` is an inline style the policy
refuses (one error per element). The pages' htmx configuration (``templates/base.html``,
``annotation/_htmx_config.html``) settles ``class``, ``width`` and ``height`` only, and injects no
indicator ``<style>`` (``includeIndicatorStyles: false``)."""

import re

from tests.browser_support import browser_only, log_in

pytestmark = browser_only

STYLE_EVERY_ELEMENT_WITH_AN_ID = """(selector) => {
    const styled = document.querySelectorAll(selector + ' [id]');
    styled.forEach(element => { element.style.outline = '1px solid transparent'; });
    return styled.length;
}"""
AWAIT_NEXT_SETTLE = "() => { window.settled = new Promise(done => document.body.addEventListener('htmx:afterSettle', done, {once: true})); }"
"""Arm a promise of htmx's next settle (the swap's completion signal: the attributes are settled then)."""


def _errors(page) -> list[str]:
    """The browser's console errors on ``page`` from now on, but Chrome's own line for a 4xx answer
    (``Failed to load resource: ... 422``), which the write page's refusal rightly is."""
    errors = []

    def note(message):
        if message.type == "error" and not message.text.startswith("Failed to load resource: the server responded with a status of 4"):
            errors.append(message.text)

    page.on("console", note)
    return errors


def test_re_ranking_the_leaderboard_logs_no_error(page, client, live_server, researcher, site):
    log_in(page, client, researcher, live_server)
    errors = _errors(page)
    page.goto("/tasks/sentiment/leaderboard/")
    page.locator("#weights-panel > summary").click()
    assert page.evaluate(STYLE_EVERY_ELEMENT_WITH_AN_ID, "#leaderboard-table") > 0

    page.evaluate(AWAIT_NEXT_SETTLE)

    with page.expect_response(re.compile(r"/leaderboard/table/")) as answered:
        page.locator("#w_performance").fill("2")
    page.evaluate("() => window.settled.then(() => true)")

    assert answered.value.status == 200

    assert errors == []


def test_a_refused_example_on_the_write_page_logs_no_error(page, client, live_server, annotator, site):
    log_in(page, client, annotator, live_server)
    errors = _errors(page)
    page.goto("/tasks/sentiment/write/")
    assert page.evaluate(STYLE_EVERY_ELEMENT_WITH_AN_ID, "#workspace") > 0
    page.evaluate("() => document.querySelectorAll('#workspace [required]').forEach(e => e.removeAttribute('required'))")

    page.evaluate(AWAIT_NEXT_SETTLE)

    with page.expect_response(lambda response: response.request.method == "POST") as answered:
        page.locator("#workspace button[type=submit]").click()
    page.evaluate("() => window.settled.then(() => true)")

    assert answered.value.status == 422

    assert errors == []
