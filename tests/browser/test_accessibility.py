"""axe-core finds no serious or critical accessibility violation on the main pages (issue 17).

axe-core (the engine bundled by ``axe-playwright-python``) checks labelled controls, colour
contrast, landmarks, names of buttons and links, ARIA use, and more, on each page as its
user sees it: the home, task, create, validation, my-examples, round, leaderboard, model and
sign-up pages, and the create page after an answer.

One seeded site serves them all: each page is a subtest of its own (its own failure report),
seen as on a first visit (``start_over``: no cookie of the page before, its user's own session)
in one browser page, so the site is built and flushed once instead of once per page.
"""

from tests.browser.conftest import PAGES
from tests.browser_support import browser_only, fresh_page, serious_axe_violations, start_over

pytestmark = browser_only


def test_no_serious_or_critical_violation(browser, client, live_server, site, request, annotator, subtests):
    with fresh_page(browser, live_server) as page:
        for name, path, who in PAGES:
            with subtests.test(msg=name):
                start_over(page, client, request.getfixturevalue(who) if who else None, live_server)
                response = page.goto(path.format(model=site["model"].pk))
                assert response.status == 200, f"{name}: {page.url} answered {response.status}"
                assert serious_axe_violations(page) == [], f"{name}: {page.url}"

        # last: the answer adds an example to the site the pages above were checked on
        with subtests.test(msg="create after an answer"):
            start_over(page, client, annotator, live_server)
            page.goto("/tasks/sentiment/write/")
            page.fill("textarea[name=text]", "A quiet street, a loud bar next door.")
            page.check("input[name=label][value=neutral]")
            page.click("button[type=submit]")
            page.locator("#outcome").wait_for()
            assert serious_axe_violations(page) == [], "the create page after an answer"
