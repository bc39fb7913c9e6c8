"""Finding 1 in a real browser: the reflected XSS payloads do not run, and our pages work under the CSP.

Headless Chromium (Debian's, through Playwright) opens the two URLs that used to reflect
``<img src=x onerror=alert(1)>`` and a set of pages with scripts (htmx, sliders, the
annotation workspace, the review keys, the API docs); no dialog may open and the console
may show no Content-Security-Policy violation.

The three checks share one seeded database (built and flushed once): each is a subtest of its
own, on a fresh page of its own context, in the order the old tests ran.
"""

from contextlib import contextmanager
from urllib.parse import quote

from tests.browser_support import HANG_MS, browser_only, log_in
from validation.tests.conftest import make_example

pytestmark = browser_only

PAYLOAD = "<img src=x onerror=alert(1)>"


@contextmanager
def _recording_page(browser, live_server):
    """A fresh page (its own context) of the module's one Chromium (``tests.browser_support.browser``)
    that records dialogs and Content-Security-Policy violations."""
    context = browser.new_context(base_url=live_server.url)
    try:
        page = context.new_page()
        page.set_default_timeout(HANG_MS)
        page.dialogs, page.violations = [], []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("console", lambda msg: page.violations.append(f"{page.url}: {msg.text[:90]}") if "Content Security Policy" in msg.text else None)
        yield page
    finally:
        context.close()


def test_payloads_do_not_execute_and_pages_work_under_the_csp(browser, client, live_server, sentiment_task, sentiment_model, annotator,
                                                              validator, admin_user, subtests):
    checks = (
        ("the reflected payloads do not execute", lambda page: _the_reflected_payloads_do_not_execute(page)),
        ("pages with scripts work without CSP violations",
         lambda page: _pages_with_scripts_work_without_csp_violations(page, client, live_server, sentiment_task, annotator, validator)),
        ("the admin and job dashboard work without CSP violations",
         lambda page: _admin_and_job_dashboard_work_without_csp_violations(page, client, live_server, sentiment_task, admin_user)),
    )
    for name, check in checks:
        with subtests.test(msg=name), _recording_page(browser, live_server) as page:
            check(page)


def _the_reflected_payloads_do_not_execute(page):
    for url in (f"/tasks/?{quote(PAYLOAD)}=%00", f"/tasks/sentiment/leaderboard/table/?w_performance={quote(PAYLOAD)}"):
        response = page.goto(url)
        page.wait_for_load_state("load")
        assert response.status == 400
        assert page.locator("img").count() == 0  # shown as text, not parsed as a tag
        assert PAYLOAD in page.inner_text("body")

    assert page.dialogs == []


def _pages_with_scripts_work_without_csp_violations(page, client, live_server, sentiment_task, annotator, validator):
    page.goto("/tasks/")
    page.goto("/accounts/login/")
    page.goto("/tasks/sentiment/leaderboard/")
    page.locator("#weights-panel > summary").click()  # the sliders sit one click below the table
    slider = page.locator("#weights input[type=range]").first
    slider.fill("3.5")
    assert page.locator(f"#o_{slider.get_attribute('id')}").inner_text() == "3.5"  # static/js/leaderboard.js

    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    page.fill("textarea[name=text]", "The room was small but spotless and quiet.")
    page.check("input[name=label][value=negative]")
    page.click("button[type=submit]")
    page.locator(".bars [role=meter] rect").first.wait_for(state="attached")  # htmx swapped the result in
    width = page.locator(".bars [role=meter] rect").first.bounding_box()["width"]
    assert width >= 0

    make_example(sentiment_task, annotator)
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")
    page.locator("#review-form").wait_for()
    page.keyboard.press("c")  # static/js/review.js
    assert page.locator('input[name="label"][value="correct"]').is_checked()

    page.goto("/api/docs/")
    page.wait_for_selector(".opblock", timeout=HANG_MS)

    assert page.violations == []
    assert page.dialogs == []


def _admin_and_job_dashboard_work_without_csp_violations(page, client, live_server, sentiment_task, admin_user):
    log_in(page, client, admin_user, live_server)
    for url in ("/admin/", "/admin/tasks/task/", f"/admin/tasks/task/{sentiment_task.pk}/change/", "/admin/tasks/round/add/", "/django-rq/"):
        response = page.goto(url)
        page.wait_for_load_state("load")
        assert response.status == 200, url

    assert page.violations == []
