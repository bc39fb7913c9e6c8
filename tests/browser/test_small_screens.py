"""Every main page is usable on a phone (390×844) and at 1280×800 without sideways scrolling of
the page body; wide tables scroll inside their own box (issue 17).

One seeded site serves every page at both sizes: each page and size is a subtest of its own
(its own failure report), seen as on a first visit (``start_over``: no cookie of the page before,
its user's own session) in one browser page per size, so the site is built and flushed once
instead of once per page and size.

With ``DYNABENCH_SCREENSHOTS=<folder>`` the test also saves a full-page screenshot of each page
at each size there (``docs/screenshots/`` holds the committed ones, linked from the README).
"""


from tests.browser.conftest import PAGES
from tests.browser_support import DESKTOP, PHONE, browser_only, fresh_page, horizontal_overflow, save_screenshot, start_over

pytestmark = browser_only
SIZES = {"phone": PHONE, "desktop": DESKTOP}


def test_no_sideways_scrolling(browser, client, live_server, site, request, subtests):
    for size, viewport in SIZES.items():
        with fresh_page(browser, live_server, viewport) as page:
            for name, path, who in PAGES:
                with subtests.test(msg=f"{name} at {size}"):
                    start_over(page, client, request.getfixturevalue(who) if who else None, live_server)
                    _check(page, name, path.format(model=site["model"].pk), size, viewport)


def _check(page, name, path, size, viewport):
    response = page.goto(path)
    assert response.status == 200, f"{name} at {size}: {page.url} answered {response.status}"
    assert horizontal_overflow(page) == 0, f"{name} at {size}: {page.url} scrolls sideways by {horizontal_overflow(page)} px"
    # every control can be reached: nothing interactive lies beyond the window's right edge
    beyond = page.evaluate(
        """(width) => [...document.querySelectorAll('a, button, input, select, textarea')]
            .filter(el => el.offsetParent !== null && !el.closest('.table-scroll'))
            .filter(el => el.getBoundingClientRect().right > width + 1)
            .map(el => el.outerHTML.slice(0, 80))""",
        viewport["width"],
    )
    assert beyond == [], f"{name} at {size}: controls beyond the window's right edge"
    save_screenshot(page, f"{name}-{viewport['width']}x{viewport['height']}")
