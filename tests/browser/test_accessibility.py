"""axe-core finds no serious or critical accessibility violation on the main pages (issue 17).

axe-core (the engine bundled by ``axe-playwright-python``) checks labelled controls, colour
contrast, landmarks, names of buttons and links, ARIA use, and more, on each page as its
user sees it: the home, task, create, validation, my-examples, round, leaderboard, model and
sign-up pages.
"""

import pytest

from tests.browser.conftest import PAGES
from tests.browser_support import browser_only, log_in, serious_axe_violations

pytestmark = browser_only


@pytest.mark.parametrize(("name", "path", "who"), PAGES, ids=[p[0] for p in PAGES])
def test_no_serious_or_critical_violation(page, client, live_server, site, request, name, path, who):
    if who:
        log_in(page, client, request.getfixturevalue(who), live_server)
    response = page.goto(path.format(model=site["model"].pk))
    assert response.status == 200
    assert serious_axe_violations(page) == []


def test_the_create_page_after_an_answer_has_no_serious_violation(page, client, live_server, site, annotator):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    page.fill("textarea[name=text]", "A quiet street, a loud bar next door.")
    page.check("input[name=label][value=neutral]")
    page.click("button[type=submit]")
    page.locator("#outcome").wait_for()
    assert serious_axe_violations(page) == []
